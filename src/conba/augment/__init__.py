"""Code perturbations for the noise-robustness experiment.

=============  ===========================================  ==========================  ===============
name           what changes                                 level p is a fraction of    keeps it parsing
=============  ===========================================  ==========================  ===============
``synonym``    consistent renaming of declared identifiers  renameable names            yes (checked)
``insertion``  dead statements inserted before statements   statements                  yes (checked)
``swap``       independent adjacent statements exchanged    statements (moved)          yes (checked)
``deletion``   tokens removed                               tokens                      no
=============  ===========================================  ==========================  ===============

Every result is deterministic given (code, language, kind, level, seed). For the three
structure-preserving kinds the edit is checked with tree-sitter: when it would add ERROR or MISSING
nodes, the snippet is left unchanged (``status == "reverted"``). Languages without a grammar or a
table in :mod:`.specs` are left unchanged by them (``status == "unsupported"``); deletion then falls
back to a regex tokenizer. ``PerturbResult.fraction`` reports what was actually applied.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from conba.augment.delete import delete
from conba.augment.insert import insert
from conba.augment.rename import rename
from conba.augment.specs import SPECS, spec_for
from conba.augment.swap import swap
from conba.augment.syntax import count_errors, error_count, parse, parses_cleanly
from conba.errors import ConfigError

PERTURBATIONS: tuple[str, ...] = ("synonym", "insertion", "swap", "deletion")
KEEPS_PARSING: dict[str, bool] = {"synonym": True, "insertion": True, "swap": True, "deletion": False}
UNITS: dict[str, str] = {"synonym": "renameable names", "insertion": "statements", "swap": "statements",
                         "deletion": "tokens"}

__all__ = ["PERTURBATIONS", "KEEPS_PARSING", "UNITS", "SPECS", "PerturbResult", "perturb", "parses_cleanly",
           "error_count"]


@dataclass(frozen=True)
class PerturbResult:
    code: str
    kind: str
    level: float
    applied: int     # units changed: names renamed, statements inserted / moved, tokens deleted
    total: int       # units the level refers to (see UNITS)
    status: str      # ok | unchanged (nothing to do) | unsupported | reverted

    @property
    def fraction(self) -> float:
        """The fraction actually applied: ``applied / total`` (0 when there is nothing to apply it to)."""
        return self.applied / self.total if self.total else 0.0


def _rng(code: str, language: str, kind: str, level: float, seed: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}|{kind}|{level:.6f}|{language}|".encode() + code.encode("utf-8")).hexdigest()
    return random.Random(digest)


def perturb(code: str, language: str, kind: str, level: float, seed: int = 0) -> PerturbResult:
    """Apply perturbation ``kind`` at level ``level`` (0..1) to ``code`` written in ``language``."""
    if kind not in PERTURBATIONS:
        raise ConfigError(f"unknown perturbation '{kind}' (choose from {', '.join(PERTURBATIONS)})")
    if not isinstance(code, str):
        raise TypeError("code must be a string")
    if not 0.0 <= float(level) <= 1.0:
        raise ConfigError(f"level must be between 0 and 1, got {level}")
    parsed = parse(code, language)
    spec = spec_for(language)
    if level == 0:
        return PerturbResult(code, kind, level, 0, 0, "unchanged")
    rng = _rng(code, language, kind, level, seed)
    if kind == "deletion":
        root, src = (parsed[0].root_node, parsed[1]) if parsed is not None else (None, code.encode("utf-8"))
        new, applied, total = delete(root, src, level, rng)
        return PerturbResult(new, kind, level, applied, total, "ok" if applied else "unchanged")
    if parsed is None or spec is None:
        return PerturbResult(code, kind, level, 0, 0, "unsupported")
    tree, src = parsed
    if kind == "synonym":
        new, applied, total = rename(tree.root_node, src, spec, language, level, rng)
    elif kind == "insertion":
        new, applied, total = insert(tree.root_node, src, spec, level, rng)
    else:
        new, applied, total = swap(tree.root_node, src, spec, language, level, rng)
    if applied == 0:
        return PerturbResult(code, kind, level, 0, total, "unchanged")
    new_tree = parse(new, language)
    if new_tree is None or count_errors(new_tree[0].root_node) > count_errors(tree.root_node):
        return PerturbResult(code, kind, level, 0, total, "reverted")
    return PerturbResult(new, kind, level, applied, total, "ok")
