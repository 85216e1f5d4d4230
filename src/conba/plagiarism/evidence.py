"""The evidence of a pair: the fragments of both submissions that match, as line ranges a teacher can read.

Greedy string tiling (Wise 1993; what JPlag shows) over the two language-neutral token streams: repeatedly
the longest run of equal tokens not yet covered on either side, down to ``MIN_MATCH`` tokens. Runs may come
in any order on the two sides (a copy that moved its helper functions around still matches). Each run becomes
a fragment: the file and line range it spans in each submission, and its length in tokens; ``coverage`` is
the share of both streams inside fragments. Streams are cut at ``MAX_TOKENS`` tokens each, so one huge file
cannot stall a report, and a run of ``MIN_MATCH`` tokens that B repeats more than ``MAX_STARTS`` times starts
no tile (it can still be inside one).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from conba.plagiarism.features import Fingerprint

MIN_MATCH = 8
MAX_TOKENS = 20_000
MAX_FRAGMENTS = 50
MAX_STARTS = 64  # a run of MIN_MATCH tokens found more often than this in B starts no tile (repetitive code)


@dataclass(frozen=True)
class Fragment:
    """Matched tokens: in A, file ``a_file`` lines ``a_lines``; in B, file ``b_file`` lines ``b_lines``."""

    a_file: int
    a_lines: tuple[int, int]
    b_file: int
    b_lines: tuple[int, int]
    tokens: int


def _tiles(a: list[str], b: list[str], min_match: int) -> list[tuple[int, int, int]]:
    """(start in a, start in b, length) of the greedy tiling."""
    marked_a, marked_b = [False] * len(a), [False] * len(b)
    tiles: list[tuple[int, int, int]] = []
    where_b: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for j in range(len(b) - min_match + 1):
        where_b[tuple(b[j:j + min_match])].append(j)
    for key in [k for k, v in where_b.items() if len(v) > MAX_STARTS]:
        del where_b[key]
    while True:
        best, found = min_match - 1, []
        for i in range(len(a) - min_match + 1):
            if marked_a[i]:
                continue
            for j in where_b.get(tuple(a[i:i + min_match]), ()):
                if marked_b[j]:
                    continue
                k = 0
                while (i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]
                       and not marked_a[i + k] and not marked_b[j + k]):
                    k += 1
                if k > best:
                    best, found = k, [(i, j, k)]
                elif k == best:
                    found.append((i, j, k))
        if not found:
            return tiles
        for i, j, k in found:
            if any(marked_a[i:i + k]) or any(marked_b[j:j + k]):
                continue
            for t in range(k):
                marked_a[i + t] = marked_b[j + t] = True
            tiles.append((i, j, k))


def fragments(a: Fingerprint, b: Fingerprint, min_match: int = MIN_MATCH) -> tuple[list[Fragment], float]:
    """The matched fragments of ``a`` and ``b`` (longest first, at most ``MAX_FRAGMENTS``) and the coverage."""
    sa, sb = a.stream[:MAX_TOKENS], b.stream[:MAX_TOKENS]
    tiles = _tiles(sa, sb, min_match)
    covered = sum(k for *_, k in tiles)
    coverage = 2 * covered / (len(sa) + len(sb)) if sa or sb else 0.0
    out = []
    for i, j, k in sorted(tiles, key=lambda t: (-t[2], t[0]))[:MAX_FRAGMENTS]:
        fa, la = a.where[i]
        fb, lb = b.where[j]
        # a run can cross a file boundary: keep the part in its first file
        ea = next((a.where[t][1] for t in range(i + k - 1, i - 1, -1) if a.where[t][0] == fa), la)
        eb = next((b.where[t][1] for t in range(j + k - 1, j - 1, -1) if b.where[t][0] == fb), lb)
        out.append(Fragment(fa, (la, ea), fb, (lb, eb), k))
    return out, coverage


def fragment_dict(frag: Fragment, files_a: list[str], files_b: list[str]) -> dict[str, Any]:
    return {"a_file": files_a[frag.a_file], "a_lines": list(frag.a_lines),
            "b_file": files_b[frag.b_file], "b_lines": list(frag.b_lines), "tokens": frag.tokens}
