"""Plain records the index produces: code units, search hits, clone pairs/classes, add reports."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


def content_hash(language: str, code: str) -> str:
    """Identity of a unit's content: equal hashes share one embedding."""
    return hashlib.sha256(f"{language}\0{code}".encode()).hexdigest()[:24]


@dataclass
class Unit:
    """One indexed piece of code: a function or method, or a file / line window (fallback)."""

    file: str
    qualname: str
    language: str
    start_line: int  # 1-based, inclusive
    end_line: int
    code: str
    kind: str = "function"  # function | file | window
    id: int | None = None

    @property
    def uid(self) -> int:
        """The id of a unit read back from an index (None only before it is stored: a ValueError here)."""
        if self.id is None:
            raise ValueError(f"{self.file}:{self.start_line}: {self.qualname} is not stored in an index (no id)")
        return self.id

    @property
    def hash(self) -> str:
        return content_hash(self.language, self.code)

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1

    @property
    def location(self) -> str:
        return f"{self.file}:{self.start_line}"

    def to_dict(self, code: bool = False) -> dict[str, Any]:
        d = {"id": self.id, "file": self.file, "name": self.qualname, "language": self.language,
             "start_line": self.start_line, "end_line": self.end_line, "kind": self.kind}
        if code:
            d["code"] = self.code
        return d


@dataclass
class Hit:
    """A search result."""

    score: float
    unit: Unit

    def to_dict(self, rank: int | None = None, code: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"rank": rank} if rank is not None else {}
        d["score"] = round(self.score, 4)
        d.update(self.unit.to_dict(code=code))
        return d


@dataclass
class ClonePair:
    a: Unit
    b: Unit
    score: float


@dataclass
class CloneClass:
    """A connected component of the clone graph."""

    id: int
    units: list[Unit]
    pairs: list[ClonePair]

    @property
    def languages(self) -> list[str]:
        return sorted({u.language for u in self.units})

    @property
    def max_score(self) -> float:
        return max(p.score for p in self.pairs)

    @property
    def mean_score(self) -> float:
        return sum(p.score for p in self.pairs) / len(self.pairs)

    def to_dict(self, code: bool = False) -> dict[str, Any]:
        return {
            "class": self.id, "size": len(self.units), "languages": self.languages,
            "max_score": round(self.max_score, 4), "mean_score": round(self.mean_score, 4),
            "members": [u.to_dict(code=code) for u in self.units],
            "pairs": [{"a": p.a.id, "b": p.b.id, "score": round(p.score, 4)} for p in self.pairs],
        }


@dataclass
class AddReport:
    """What one ``Index.add`` did."""

    files_seen: int = 0
    files_changed: int = 0
    files_removed: int = 0
    units_total: int = 0
    units_encoded: int = 0
    units_reused: int = 0
    vectors_repaired: int = 0  # stored vectors that failed their checksum and were encoded again
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[str] = field(default_factory=list)  # one line each, naming a path: kept, not read
    syntax_errors: list[tuple[str, int]] = field(default_factory=list)  # (path, line): parsed with errors
    seconds: float = 0.0
    view: str = "raw"              # the model's input view (conba.syntax.view)
    view_fallbacks: int = 0        # encoded units the view could not handle, so they went in raw
    engine: str = "torch"          # the inference engine of the index's vectors (conba.engine)

    def skip_summary(self) -> str:
        if not self.skipped:
            return ""
        counts = Counter(reason for _, reason in self.skipped)
        return ", ".join(f"{n} {reason}" for reason, n in counts.most_common())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        d["syntax_errors"] = [{"path": p, "line": line} for p, line in self.syntax_errors]
        return d
