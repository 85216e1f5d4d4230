import sys


def read_records(stream):
    records = []
    for line in stream:
        line = line.strip()
        if not line:
            continue
        name, score = line.split()
        records.append((name, int(score)))
    return records


LETTERS = [(90, "A"), (80, "B"), (70, "C"), (0, "F")]


def letter_of(points):
    for bound, letter in LETTERS:
        if points >= bound:
            return letter


def main():
    records = read_records(sys.stdin)
    if not records:
        print("average 0.00")
        return
    best = sorted(records, key=lambda item: item[0])
    best.sort(key=lambda item: item[1], reverse=True)
    for name, points in best[:3]:
        print(name, points)
    print("average %.2f" % (sum(p for _, p in records) / len(records)))
    tally = {}
    for _, points in records:
        letter = letter_of(points)
        tally[letter] = tally.get(letter, 0) + 1
    for _, letter in LETTERS:
        print(f"{letter}: {tally.get(letter, 0)}")


if __name__ == "__main__":
    main()
