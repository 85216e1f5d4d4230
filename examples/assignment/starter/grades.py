"""Assignment 3, grades: read 'name score' lines from stdin, print the three best students (score
descending, then name), the average to two decimals, and how many got each letter (A >= 90, B >= 80,
C >= 70, else F). Keep read_records as it is."""
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


def main():
    records = read_records(sys.stdin)
    # your code here


if __name__ == "__main__":
    main()
