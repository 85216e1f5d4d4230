import sys

from grading import podium, to_letter


def read_records(stream):
    records = []
    for line in stream:
        line = line.strip()
        if not line:
            continue
        name, score = line.split()
        records.append((name, int(score)))
    return records


def main():
    records = read_records(sys.stdin)
    for name, score in podium(records):
        print(name, score)
    avg = 0.0
    if records:
        avg = sum(score for _, score in records) / len(records)
    print("average", format(avg, ".2f"))
    seen = {"A": 0, "B": 0, "C": 0, "F": 0}
    for _, score in records:
        seen[to_letter(score)] += 1
    for letter, count in seen.items():
        print(f"{letter}: {count}")


if __name__ == "__main__":
    main()
