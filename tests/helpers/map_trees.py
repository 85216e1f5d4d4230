"""Two tiny trees for the `conba map` tests (tests/mapping/test_map_cli.py and the lab's browser test): alpha once in
the target (matched), beta twice (ambiguous), gamma not at all (missing)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

ALPHA = "def alpha(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"
BETA = ("def beta(s):\n    out = []\n    for ch in s:\n        if ch.isupper():\n            out.append(ch.lower())\n"
        "    return ''.join(out)\n")
GAMMA = ("def gamma(n):\n    if n < 2:\n        return n\n    a, b = 0, 1\n    while n > 0:\n        a, b = b, a + b\n"
         "        n -= 1\n    return a  # <script>alert('x')</script>\n")
T = "0.999"  # with the tiny model only the very same code clears it


def run(*args: str):
    """``conba ARGS`` through click's runner."""
    from conba.cli.main import cli

    return CliRunner().invoke(cli, list(args))


def map_trees(root: Path, tiny_model: str) -> tuple[Path, Path, str, str]:
    """(source, target, index, model) under ``root``; the index already holds both trees (mapped at :data:`T`)."""
    src, tgt = root / "src", root / "tgt"
    src.mkdir()
    tgt.mkdir()
    (src / "a.py").write_text(ALPHA + "\n\n" + BETA + "\n\n" + GAMMA)
    (tgt / "x.py").write_text(ALPHA + "\n\n" + BETA)
    (tgt / "y.py").write_text(BETA)
    index = root / "idx"
    result = run("map", str(src), str(tgt), "-i", str(index), "-m", tiny_model, "-t", T)
    assert result.exit_code == 0, result.output
    return src, tgt, str(index), tiny_model


# one function in two languages, for the line-alignment tests (test_map_align and the lab's browser test)
JAVA = """/**
 * Sum of the squares.
 */
public int sumSquares(int[] xs) {
  int total = 0;
  for (int x : xs) {
    total += x * x;
  }
  return total;
}
"""
PYTHON = '''def sum_squares(xs):
    """Sum of the squares."""
    total = 0
    for x in xs:
        total += x * x
    return total
'''
