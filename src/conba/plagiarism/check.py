"""One plagiarism check: the submissions of a folder in, their pairs ranked by suspicion out.

:func:`check` reads a folder (:mod:`.submissions`), :func:`check_submissions` scores given submissions (what the
server calls). Submissions whose code has no token left (only comments, or only starter code) are skipped and
counted. Every candidate pair is reported with its score, its structure score and channel cosines, ranked by
the score; a pair is *suspicious* when either score reaches the threshold. The suspicious pairs, and the
``EVIDENCE_PAIRS`` highest, also get their matched fragments. Clusters are the connected groups of
submissions joined by suspicious pairs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conba.errors import UsageError
from conba.plagiarism.calibration import calibrate
from conba.plagiarism.evidence import fragment_dict, fragments
from conba.plagiarism.features import Fingerprint, base_lines, fingerprint
from conba.plagiarism.scoring import WEIGHTS, score_pairs
from conba.plagiarism.submissions import Submission, load_base, load_folder

# a pair is suspicious when its score or its structure score reaches it: each is reached by 0.5% of the
# same-task independent pairs of plagiarism_dev of its kind (conba.plagiarism.calibration); measured
# together, docs/plagiarism.md
THRESHOLD = 0.995
DEFAULT_TOP = 20        # candidate partners per submission in classes larger than DEFAULT_TOP + 1
EVIDENCE_PAIRS = 50     # pairs below the threshold that still get their fragments (the top of the list)


@dataclass
class PairRecord:
    """One pair of submissions: names as in the folder, the score, per-channel cosines, the evidence."""

    a: str
    b: str
    score: float
    similarity: float
    structure_score: float
    channels: dict[str, float]
    suspicious: bool
    coverage: float | None = None
    fragments: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"a": self.a, "b": self.b, "score": round(self.score, 6),
                             "similarity": round(self.similarity, 6),
                             "structure_score": round(self.structure_score, 6), "suspicious": self.suspicious,
                             "channels": {k: round(v, 4) for k, v in self.channels.items()}}
        if self.fragments is not None:
            d["coverage"] = round(self.coverage or 0.0, 4)
            d["fragments"] = self.fragments
        return d


@dataclass
class Report:
    """The result of a check: the submissions scored, the pairs (highest score first), clusters, skips."""

    submissions: list[Submission]
    pairs: list[PairRecord]
    threshold: float
    clusters: list[list[str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    base: str | None = None

    def summary(self) -> dict[str, Any]:
        flagged = sum(p.suspicious for p in self.pairs)
        return {"submissions": len(self.submissions), "pairs": len(self.pairs), "suspicious_pairs": flagged,
                "clusters": len(self.clusters), "threshold": self.threshold, "skipped": len(self.skipped),
                "base": self.base}


def _clusters(names: list[str], pairs: list[PairRecord]) -> list[list[str]]:
    parent = {n: n for n in names}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        if p.suspicious:
            parent[find(p.a)] = find(p.b)
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(find(n), []).append(n)
    best = {n: 0.0 for n in names}
    for p in pairs:
        best[p.a], best[p.b] = max(best[p.a], p.score), max(best[p.b], p.score)
    out = [sorted(g) for g in groups.values() if len(g) > 1]
    return sorted(out, key=lambda g: (-max(best[n] for n in g), g))


def check_submissions(subs: list[Submission], base: Submission | None = None, *, top: int = DEFAULT_TOP,
                      threshold: float = THRESHOLD, weights: dict[str, float] = WEIGHTS,
                      evidence_pairs: int = EVIDENCE_PAIRS, skipped: list[tuple[str, str]] | None = None,
                      where: str = "the folder") -> Report:
    """Score the pairs of ``subs``; ``base``: starter code whose lines and features count for no pair."""
    skipped = list(skipped or [])
    lines = base_lines(base)
    base_fp = fingerprint(base) if base is not None else None
    kept: list[Submission] = []
    fps: list[Fingerprint] = []
    for sub in subs:
        fp = fingerprint(sub, base_fp, lines)
        if fp.tokens == 0:
            skipped.append((sub.name, "no code left" + (" after the starter code" if base is not None else "")))
            continue
        kept.append(sub)
        fps.append(fp)
    if len(kept) < 2:
        found = f"{len(kept)} submission" + ("s" if len(kept) != 1 else "")
        why = f" ({len(skipped)} skipped: " + ", ".join(f"{n}: {r}" for n, r in skipped[:3]) + \
              (", ..." if len(skipped) > 3 else "") + ")" if skipped else ""
        raise UsageError(f"{where}: {found} to compare{why}; a check needs at least 2 (one file or folder "
                         "per submission)")
    scored = score_pairs(fps, top=top, weights=weights)
    same = np.array([kept[sp.i].languages == kept[sp.j].languages for sp in scored], dtype=bool)
    scores = calibrate(np.array([sp.score for sp in scored]), same) if scored else np.zeros(0)
    structure = calibrate(np.array([sp.channels["structure"] for sp in scored]), same, "structure") \
        if scored else np.zeros(0)
    order = sorted(range(len(scored)), key=lambda k: (-scores[k], scored[k].i, scored[k].j))
    pairs = []
    for rank, k in enumerate(order):
        sp = scored[k]
        a, b = kept[sp.i], kept[sp.j]
        rec = PairRecord(a.name, b.name, float(scores[k]), sp.score, float(structure[k]), sp.channels,
                         bool(max(scores[k], structure[k]) >= threshold))
        if rec.suspicious or rank < evidence_pairs:
            frags, coverage = fragments(fps[sp.i], fps[sp.j])
            files_a, files_b = [f.path for f in a.files], [f.path for f in b.files]
            rec.fragments = [fragment_dict(f, files_a, files_b) for f in frags]
            rec.coverage = coverage
        pairs.append(rec)
    return Report(kept, pairs, threshold, _clusters([s.name for s in kept], pairs), skipped,
                  base=None if base is None else base.name)


def check(folder: str | os.PathLike, base: str | os.PathLike | None = None, *, top: int = DEFAULT_TOP,
          threshold: float = THRESHOLD, evidence_pairs: int = EVIDENCE_PAIRS,
          weights: dict[str, float] = WEIGHTS) -> Report:
    """Check the assignment ``folder`` (one file or folder per submission, any mix of languages); ``base``:
    the starter code (a file or folder); ``weights``: each channel's share of the score (an ablation sets
    one to 0). Raises a one-line :class:`~conba.errors.ConbaError` on bad input."""
    loaded = load_folder(folder)
    base_sub = load_base(base) if base is not None else None
    if base is not None:
        # the starter code inside FOLDER is no submission
        real = os.path.realpath(base)
        keep = [s for s in loaded.submissions if os.path.realpath(os.path.join(folder, s.name)) != real]
        loaded.submissions = keep
    return check_submissions(loaded.submissions, base_sub, top=top, threshold=threshold, weights=weights,
                             evidence_pairs=evidence_pairs, skipped=loaded.skipped, where=str(folder))
