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


def grade(score):
    if score >= 90:
        return "A"
    elif score >= 80:
        return "B"
    elif score >= 70:
        return "C"
    return "F"


def summarize(records):
    ranked = sorted(records, key=lambda r: (-r[1], r[0]))
    total = 0
    counts = {"A": 0, "B": 0, "C": 0, "F": 0}
    for name, score in records:
        total += score
        counts[grade(score)] += 1
    average = total / len(records) if records else 0.0
    return ranked[:3], average, counts


def main():
    records = read_records(sys.stdin)
    top, average, counts = summarize(records)
    for name, score in top:
        print(f"{name} {score}")
    print(f"average {average:.2f}")
    for letter in "ABCF":
        print(f"{letter}: {counts[letter]}")


if __name__ == "__main__":
    main()
