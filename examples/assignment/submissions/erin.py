import sys
from collections import Counter
from statistics import mean


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
    ordered = sorted(records, key=lambda rec: (-rec[1], rec[0]))[:3]
    print("\n".join(f"{n} {s}" for n, s in ordered))
    print(f"average {mean(s for _, s in records) if records else 0:.2f}")
    letters = Counter("A" if s >= 90 else "B" if s >= 80 else "C" if s >= 70 else "F" for _, s in records)
    for letter in "ABCF":
        print(f"{letter}: {letters[letter]}")


if __name__ == "__main__":
    main()
