"""HeadConfig: the JSON-serialisable description of a head (what ``head_config.json`` holds).

Glossary (dimension letters used across ``conba.heads``, as in mamba-minimal):
    b: batch size
    l: sequence length (tokens per snippet, padding included)
    d: model width (backbone hidden size, ``HeadConfig.dim``)
    n: SSM state size (``HeadConfig.state_dim``, conba-scan only)
    c: control-code width (``HeadConfig.code_dim``)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from conba.errors import ConfigError

HEAD_KINDS: tuple[str, ...] = ("conba", "conba-scan", "linear", "none")
MODES: tuple[str, ...] = ("pooled", "tokens")
POOLINGS: tuple[str, ...] = ("mean", "cls")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class HeadConfig:
    """Which head to build and its sizes.

    ``mode`` only matters for kind "conba". ``pooling`` picks how pooled heads (none, linear,
    conba/pooled) reduce the token states; token heads (conba/tokens, conba-scan) always take the
    masked mean of their per-token outputs. Control codes are on when ``languages`` is non-empty
    and ``use_control`` is True (with ``use_control=False`` they are ignored).
    """

    kind: str = "conba"
    dim: int = 384
    out_dim: int | None = None
    mode: str = "pooled"
    pooling: str = "mean"
    state_dim: int = 16
    dt_rank: int | None = None
    use_control: bool = True
    use_feedback: bool = True
    languages: list[str] = field(default_factory=list)
    code_dim: int = 16

    def __post_init__(self) -> None:
        if isinstance(self.languages, tuple):
            self.languages = list(self.languages)
        self.validate()

    # ------------------------------------------------------------------ derived sizes
    @property
    def resolved_out_dim(self) -> int:
        return self.dim if self.out_dim is None else self.out_dim

    @property
    def resolved_dt_rank(self) -> int:
        return math.ceil(self.dim / 16) if self.dt_rank is None else self.dt_rank

    @property
    def uses_control_codes(self) -> bool:
        return bool(self.languages) and self.use_control and self.kind in ("conba", "conba-scan")

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Raise ValueError (one line, naming the field) for any bad value."""
        if self.kind not in HEAD_KINDS:
            raise ConfigError(f"HeadConfig.kind must be one of {list(HEAD_KINDS)}, got {self.kind!r}")
        for name in ("dim", "state_dim", "code_dim"):
            v = getattr(self, name)
            if not _is_int(v) or v < 1:
                raise ConfigError(f"HeadConfig.{name} must be a positive int, got {v!r}")
        for name in ("out_dim", "dt_rank"):
            v = getattr(self, name)
            if v is not None and (not _is_int(v) or v < 1):
                raise ConfigError(f"HeadConfig.{name} must be None or a positive int, got {v!r}")
        if self.kind == "none" and self.out_dim not in (None, self.dim):
            raise ConfigError(f"HeadConfig.out_dim must be None or dim ({self.dim}) for kind 'none' "
                             f"(it has no parameters), got {self.out_dim!r}")
        if self.mode not in MODES:
            raise ConfigError(f"HeadConfig.mode must be one of {list(MODES)}, got {self.mode!r}")
        if self.pooling not in POOLINGS:
            raise ConfigError(f"HeadConfig.pooling must be one of {list(POOLINGS)}, got {self.pooling!r}")
        for name in ("use_control", "use_feedback"):
            v = getattr(self, name)
            if not isinstance(v, bool):
                raise ConfigError(f"HeadConfig.{name} must be a bool, got {v!r}")
        if not isinstance(self.languages, list):
            raise ConfigError(f"HeadConfig.languages must be a list of names, got {self.languages!r}")
        seen: set[str] = set()
        for lang in self.languages:
            if not isinstance(lang, str) or not lang.strip():
                raise ConfigError(f"HeadConfig.languages must hold non-empty strings, got {lang!r}")
            key = lang.strip().lower()
            if key in seen:
                raise ConfigError(f"HeadConfig.languages has a duplicate (case-insensitive): {lang!r}")
            seen.add(key)

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["languages"] = list(self.languages)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HeadConfig:
        if not isinstance(d, Mapping):
            raise ConfigError(f"HeadConfig.from_dict needs a mapping, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"unknown HeadConfig key(s) {unknown}; known keys are {sorted(known)}")
        kwargs = dict(d)
        if isinstance(kwargs.get("languages"), tuple):
            kwargs["languages"] = list(kwargs["languages"])
        return cls(**kwargs)
