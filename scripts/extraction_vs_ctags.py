"""Functions conba's extractor finds in C files against universal-ctags' function definitions.

Usage: python scripts/extraction_vs_ctags.py DIR [DIR...] [--show]
Counts, per code base, the function definitions ``ctags -x --c-kinds=f --languages=C`` lists in its
``.c`` files, how many of them conba's extractor (:func:`conba.source.extract.extract_units`) finds under
the same name on the same line range, the ones it misses, and the units it names otherwise (``--show``
lists them). Needs universal-ctags on the PATH (Debian: ``apt-get install universal-ctags``).
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from conba.source.extract import extract_units


def ctags_functions(root: Path) -> dict[str, set[tuple[str, int]]]:
    """{file: {(name, line)}} of the function definitions ctags finds in ``root``'s .c files."""
    out = subprocess.run(["ctags", "-x", "--c-kinds=f", "--languages=C", "--langmap=C:.c", "-R", str(root)],
                         capture_output=True, text=True, check=True).stdout
    found: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for line in out.splitlines():
        name, kind, row, path = line.split(None, 4)[:4]
        found[path].add((name, int(row)))
    return found


def compare(root: Path, show: bool) -> tuple[int, int, int, int]:
    """(ctags functions, found by conba with their name, missed, conba units named otherwise)."""
    reference = ctags_functions(root)
    total = hit = missed = other = 0
    for path in sorted(root.rglob("*.c")):
        text = path.read_text(encoding="utf-8", errors="replace")
        units = [u for u in extract_units(str(path), text, "c") if u.kind == "function"]
        spans = [(u.qualname.rsplit(".", 1)[-1], u.start_line, u.end_line) for u in units]
        want = reference.get(str(path), set())
        total += len(want)
        for name, row in sorted(want, key=lambda w: w[1]):
            if any(n == name and a <= row <= b for n, a, b in spans):
                hit += 1
            else:
                missed += 1
                if show:
                    print(f"  missed {path.relative_to(root)}:{row} {name}")
        names = {n for n, _ in want}
        for name, a, _ in spans:
            if name not in names:
                other += 1
                if show:
                    print(f"  named  {path.relative_to(root)}:{a} {name}")
    return total, hit, missed, other


def main(argv: list[str]) -> None:
    show = "--show" in argv
    print("| code base | ctags functions | conba: same name | missed | other names |")
    print("|---|---:|---:|---:|---:|")
    for arg in [a for a in argv if a != "--show"]:
        total, hit, missed, other = compare(Path(arg), show)
        print(f"| {Path(arg).name} | {total} | {hit} | {missed} | {other} |")


if __name__ == "__main__":
    main(sys.argv[1:])
