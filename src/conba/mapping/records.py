"""What ``conba map`` produces: a status per source function, a counterpart per source file, and the totals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conba.clones.display import display_path, relative_unit_dict
from conba.mapping.assign import AMBIGUOUS, MATCHED, MISSING
from conba.source.records import Unit

STATUSES = (MATCHED, AMBIGUOUS, MISSING)


def _r(score: float | None) -> float | None:
    return None if score is None else round(float(score), 4)


@dataclass
class FunctionMatch:
    """One source function: its counterpart (matched: the assigned target; ambiguous / missing: the best one;
    None when the target has no functions), the score, status, reason and the candidates above the threshold."""

    source: Unit
    status: str
    target: Unit | None
    score: float | None
    reason: str = ""
    candidates: list[tuple[Unit, float]] = field(default_factory=list)
    nearest: list[tuple[Unit, float]] = field(default_factory=list)  # missing: the closest targets, to check
    lines: list[dict[str, Any]] | None = None  # matched / ambiguous: aligned line ranges (conba.mapping.align)

    def to_dict(self, code: bool = False) -> dict[str, Any]:
        d = {"type": "function", "status": self.status, "reason": self.reason or None, "score": _r(self.score),
             "source": relative_unit_dict(self.source, code),
             "target": relative_unit_dict(self.target, code) if self.target is not None else None,
             "candidates": [_brief(u, s) for u, s in self.candidates]}
        if self.nearest:
            d["nearest"] = [_brief(u, s) for u, s in self.nearest]
        if self.lines is not None:
            d["lines"] = self.lines
        return d


def _brief(u: Unit, score: float) -> dict[str, Any]:
    return {"name": u.qualname, "file": display_path(u.file), "start_line": u.start_line, "score": _r(score)}


@dataclass
class FileMatch:
    """One source file: the target file most of its counterparts are in (``score``: their summed scores; when
    none of its functions has a counterpart, the target file closest on average, with ``status`` missing)."""

    source: str
    target: str | None
    score: float
    status: str
    counts: dict[str, int]
    functions: list[FunctionMatch] = field(default_factory=list, repr=False)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def coverage(self) -> float:
        """Share of the file's functions that have a counterpart (matched or ambiguous)."""
        return (self.total - self.counts[MISSING]) / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"type": "file", "status": self.status, "source": display_path(self.source),
                "target": display_path(self.target) if self.target else None, "score": _r(self.score),
                "coverage": round(self.coverage, 4), "functions": self.total, **self.counts}


@dataclass
class PortMap:
    """The map of a source tree onto a target tree."""

    functions: list[FunctionMatch]
    files: list[FileMatch]
    threshold: float
    margin: float
    target_functions: int
    skipped_trivial: int = 0
    info: dict[str, Any] = field(default_factory=dict)  # source / target / index / model, for reports
    targets: list[Unit] = field(default_factory=list, repr=False)  # the target functions mapped onto

    def counts(self) -> dict[str, int]:
        return {s: sum(f.status == s for f in self.functions) for s in STATUSES}

    @property
    def coverage(self) -> float:
        """Share of source functions that have a counterpart (matched or ambiguous); 0 for no functions."""
        n = len(self.functions)
        return (n - self.counts()[MISSING]) / n if n else 0.0

    def summary_dict(self) -> dict[str, Any]:
        files_covered = sum(f.status != MISSING for f in self.files)
        return {"type": "summary", "coverage": round(self.coverage, 4), "functions": len(self.functions),
                **self.counts(), "files": len(self.files), "files_mapped": files_covered,
                "file_coverage": round(files_covered / len(self.files), 4) if self.files else 0.0,
                "target_functions": self.target_functions, "skipped_trivial": self.skipped_trivial,
                "threshold": round(self.threshold, 4), "margin": self.margin,
                **{k: v for k, v in self.info.items() if v is not None}}

    def summary(self) -> str:
        """Lines for people (stderr): overall coverage, counts per status, then coverage per source file."""
        c = self.counts()
        lines = [f"coverage {self.coverage:.1%}: {len(self.functions) - c[MISSING]} of {len(self.functions)} source "
                 f"functions have a counterpart ({c[MATCHED]} matched, {c[AMBIGUOUS]} ambiguous, {c[MISSING]} "
                 f"missing; threshold {self.threshold:.3f}, {self.target_functions} target functions)"]
        for f in sorted(self.files, key=lambda f: (f.coverage, f.source)):
            target = display_path(f.target) if f.target else "-"
            lines.append(f"  {f.coverage:6.1%}  {display_path(f.source)} -> {target}  "
                         f"({f.counts[MATCHED]} matched, {f.counts[AMBIGUOUS]} ambiguous, {f.counts[MISSING]} missing)")
        return "\n".join(lines)
