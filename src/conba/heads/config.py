"""HeadConfig: the JSON-serialisable description of a head (what ``head_config.json`` holds).

Glossary (dimension letters used across ``conba.heads``, as in mamba-minimal):
    b: batch size
    l: sequence length (tokens per snippet, padding included)
    d: model width (backbone hidden size, ``HeadConfig.dim``)
    n: SSM state size (``HeadConfig.state_dim``, conba-scan only)
    c: control-code width (``HeadConfig.code_dim``)

The fields past ``pooling`` (but ``languages`` and ``code_mode``) shape the research suite's ConbaLayer
heads (kinds "conba", "conba-scan", plugged in through ``conba.utils.head_kinds``); they stay in every saved
config (and its fingerprint) whatever the kind, so configs and fingerprints of saved models do not change,
and the product's heads ignore them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from conba.constants import HEAD_MODES, STATE_AS
from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig
from conba.utils.head_kinds import check_kind

MODES = HEAD_MODES
POOLINGS: tuple[str, ...] = ("mean", "cls")
CODE_MODES: tuple[str, ...] = ("offset", "prefix", "both")

# What a head config saved before these keys existed meant (``upgrade_legacy``): no residual, a dense
# A over tokens, ``use_feedback`` switching the whole state path, codes only as the offset.
LEGACY_VALUES: dict[str, Any] = {"residual": False, "state_a": "dense", "code_mode": "offset"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class HeadConfig(JsonConfig):
    """Which head to build and its sizes.

    ``kind``: "linear" (pooling + Linear, the default), "none" (pooling only), or a kind an installed
    distribution plugs in (``conba.utils.head_kinds``: the research suite's "conba", "conba-scan").
    ``pooling`` picks how pooled heads reduce the token states (and the ConbaLayer heads' residual).

    The research suite's ConbaLayer heads (conba, conba-scan; the product's heads ignore these fields):
      * ``mode`` (kind "conba"): one step on the pooled vector, or a recurrence over the tokens; token
        heads (conba/tokens, conba-scan) take the masked mean of their per-token outputs.
      * ``residual``: embedding = pool(x) + fc2(...) with fc2 zero-initialised, so a fresh head
        returns the pooled backbone vector (as the identity-initialised linear head does).
      * ``use_state``: the state (A, B; conba-scan: the S6 SSM). False: no state, feedback term 0.
      * ``use_feedback``: the learnable ``feedback_weight`` on the state term (False: weight 1).
      * ``use_control``: the learnable ``control_weight`` (and the offset control codes).
      * ``state_a`` (conba over tokens): "diag" (A = diag(exp(-exp(A_log))), parallel scan) or
        "dense" (a full d × d A, sequential loop).
    Control codes are on when ``languages`` is non-empty: ``code_mode`` "prefix" inserts a learned code
    vector after the CLS token at the backbone's embedding layer (every kind), "offset" adds W · code(lang)
    to control_weight (ConbaLayer kinds with ``use_control`` only), "both" does both.
    """

    config_name: ClassVar[str] = "head config"

    kind: str = "linear"
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
    residual: bool = True
    state_a: str = "diag"
    use_state: bool = True
    code_mode: str = "offset"

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
    def uses_prefix_codes(self) -> bool:
        """A learned code vector per language is inserted after CLS at the backbone's embedding layer."""
        return bool(self.languages) and self.code_mode in ("prefix", "both")

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Raise ValueError (one line, naming the field) for any bad value."""
        check_kind(self.kind)
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
        if self.state_a not in STATE_AS:
            raise ConfigError(f"HeadConfig.state_a must be one of {list(STATE_AS)}, got {self.state_a!r}")
        if self.code_mode not in CODE_MODES:
            raise ConfigError(f"HeadConfig.code_mode must be one of {list(CODE_MODES)}, got {self.code_mode!r}")
        for name in ("use_control", "use_feedback", "use_state", "residual"):
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

    def fingerprint_dict(self) -> dict[str, Any]:
        """``to_dict`` without the keys that hold their legacy value, so a model saved before those
        keys existed keeps its fingerprint (and the indexes and SDTP pruners keyed by it)."""
        d = self.to_dict()
        for key, value in LEGACY_VALUES.items():
            if d[key] == value:
                del d[key]
        if d["use_state"] == d["use_feedback"]:
            del d["use_state"]
        return d

    def checked(self) -> HeadConfig:
        if isinstance(self.languages, tuple):
            self.languages = list(self.languages)
        return self


def upgrade_legacy(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A saved head config dict with the keys added since filled in with their legacy meaning.

    Before ``use_state`` existed, ``use_feedback=False`` removed the whole state path (A, B and
    feedback_weight): it maps to ``use_state=False, use_feedback=False``.
    """
    d = dict(raw)
    if "use_state" not in d:
        d["use_state"] = d.get("use_feedback", True)
    for key, value in LEGACY_VALUES.items():
        d.setdefault(key, value)
    return d
