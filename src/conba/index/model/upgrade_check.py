"""An index whose model gained a long-input read-out since it was built: how to tell, and what to say.

The index records the embedding fingerprint of its vectors. When it is the **truncation fingerprint** of the
model in use (:func:`conba.model.compat.truncation_fingerprint`: the same model without its window head,
``max_windows`` 1), the index is not another model's: every function that fits one backbone window has the
vector the model gives today, and only the longer ones differ. ``conba index`` then upgrades it in place,
re-encoding those alone (:mod:`conba.index.model.upgrade`); a reader (search, serve, eval-repo...) is told so in one
line (:class:`ModelUpgradeError`) with the number of functions the upgrade re-encodes.

Glossary: n units, h distinct unit contents (content hashes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conba.index.errors import ModelUpgradeError
from conba.index.storage.store import Store

__all__ = ["LongUnits", "check_upgradable", "long_units", "same_model_changed", "upgrade_target"]
EXACT_UP_TO = 5000  # distinct contents a reader's message counts exactly (~3 s); above: an estimate from as many


@dataclass
class LongUnits:
    """The units whose vectors an upgrade changes: ``hashes`` (their distinct contents, h), ``units`` (how
    many units have such a content) of ``total`` units; ``seen``: the units looked at (``total`` unless sampled)."""
    hashes: list[str]
    units: int
    total: int
    seen: int


def upgrade_target(store: Store, model: Any) -> str | None:
    """The model's truncation fingerprint when the index's vectors are that (an upgradable index), else None."""
    from conba.model.compat import truncation_fingerprint

    stored = store.get_meta("fingerprint")
    if stored is None:
        return None
    old = truncation_fingerprint(model)
    return old if old == stored else None


def long_units(store: Store, model: Any, sample: int | None = None) -> LongUnits:
    """The indexed units longer than one window of ``model`` (with its input view, as it encodes them),
    counted with its tokenizer (the backbone does not run). ``sample``: look at only that many distinct
    contents, drawn by a fixed seed (``hashes``, ``units`` and ``seen`` are then the sample's)."""
    from conba.model.compat import single_window

    rows = store.db.execute("SELECT hash, min(language), min(code), count(*) FROM units GROUP BY hash "
                            "ORDER BY min(id)").fetchall()
    total = sum(r[3] for r in rows)
    if sample is not None and len(rows) > sample:
        pick = np.random.default_rng(0).choice(len(rows), size=sample, replace=False)
        rows = [rows[i] for i in sorted(pick)]
    fits = single_window(model, [r[2] for r in rows], [r[1] for r in rows])
    long = [r for r, ok in zip(rows, fits) if not ok]
    return LongUnits([r[0] for r in long], sum(r[3] for r in long), total, sum(r[3] for r in rows))


def counted(store: Store, model: Any) -> str:
    """Which functions an upgrade re-encodes, for a reader's message: counted exactly up to :data:`EXACT_UP_TO`
    distinct contents (a few seconds at most), else estimated from a sample of that many ("about N")."""
    found = long_units(store, model, sample=EXACT_UP_TO)
    if found.seen == found.total:
        return f"the {found.units:,} of its {found.total:,} functions"
    estimate = round(found.units / max(1, found.seen) * found.total, -1)
    return f"about {estimate:,.0f} of its {found.total:,} functions (estimated from {found.seen:,})"


def index_flag(path: Path) -> str:
    """`` --index DIR`` unless ``path`` is the folder the commands use without one."""
    from conba.index.defaults import default_index_dir

    return "" if os.path.abspath(default_index_dir(None)) == os.path.abspath(path) else f" --index {path}"


def check_upgradable(path: Path, store: Store, model: Any, model_name: str | None) -> None:
    """Raise :class:`ModelUpgradeError` (one line: what changed, what ``conba index`` does about it) when the
    index at ``path`` holds the vectors of ``model`` without its long-input read-out; else return."""
    target = upgrade_target(store, model)
    if target is None:
        return
    which = counted(store, model)
    name = f"model '{model_name}'" if model_name else "the model"
    what = "a long-input read-out" if getattr(model, "window_head", None) is not None else \
        f"long inputs over up to {model.max_windows} windows"
    exc = ModelUpgradeError(
        f"{path}: {name} gained {what} since this index was built; `conba index PATHS{index_flag(path)}` (the "
        f"paths it was built from) updates it, re-encoding only {which} longer than one window (the others keep "
        "their vectors)")
    exc.model = model
    raise exc


def same_model_changed(path: Path, name: str, stored: str, fingerprint: str) -> str:
    """The mismatch message when the index's model has the name of the one in use (``default`` after a
    conba upgrade, a model folder trained again): the model changed, so naming it again cannot help."""
    shown = f"the shipped model '{name}'" if name in ("default", "default-fast") else f"model '{name}'"
    return (f"{path}: {shown} has changed since this index was built (its vectors were {stored}, now {fingerprint}: "
            "a newer conba, or a model folder saved again), and vectors of two models never mix; re-index with "
            f"`conba index PATHS{index_flag(path)} --rebuild` (the old index stays readable until the new one "
            "replaces it)")
