CUTOFFS = {"A": 90, "B": 80, "C": 70}


def to_letter(value):
    best = "F"
    for letter in sorted(CUTOFFS, key=CUTOFFS.get):
        if value >= CUTOFFS[letter]:
            best = letter
    return best


def podium(rows, size=3):
    chosen = []
    remaining = list(rows)
    while remaining and len(chosen) < size:
        pick = remaining[0]
        for row in remaining[1:]:
            if row[1] > pick[1] or (row[1] == pick[1] and row[0] < pick[0]):
                pick = row
        chosen.append(pick)
        remaining.remove(pick)
    return chosen
