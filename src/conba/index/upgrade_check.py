"""An index whose model gained a long-input read-out since it was built: how to tell, and what to say.

The index records the embedding fingerprint of its vectors. When it is the **truncation fingerprint** of the
model in use (:func:`conba.model.compat.truncation_fingerprint`: the same model without its fragment read-out,
``max_chunks`` 1), the index is not another model's: every function that fits one backbone window has the
vector the model gives today, and only the longer ones differ. ``conba index`` then upgrades it in place,
re-encoding those alone (:mod:`conba.index.upgrade`); a reader (search, serve, eval-repo...) is told so in one
line (:class:`ModelUpgradeError`) with the number of functions the upgrade re-encodes.

Glossary: n units, h distinct unit contents (content hashes).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conba.index.errors import ModelUpgradeError
from conba.index.store import Store

__all__ = ["LongUnits", "check_upgradable", "long_units", "same_model_changed", "upgrade_target"]
COUNT_META = "upgrade_count"  # "<target fingerprint>:<units version>:<long units>": the reader's count, cached


@dataclass
class LongUnits:
    """The units whose vectors an upgrade changes: ``hashes`` (their distinct contents, h), ``units`` (how
    many units have such a content) of ``total`` units."""
    hashes: list[str]
    units: int
    total: int


def upgrade_target(store: Store, model: Any) -> str | None:
    """The model's truncation fingerprint when the index's vectors are that (an upgradable index), else None."""
    from conba.model.compat import truncation_fingerprint

    stored = store.get_meta("fingerprint")
    if stored is None:
        return None
    old = truncation_fingerprint(model)
    return old if old == stored else None


def long_units(store: Store, model: Any) -> LongUnits:
    """The indexed units longer than one window of ``model`` (with its input view, as it encodes them),
    counted with its tokenizer (the backbone does not run)."""
    from conba.model.compat import single_window

    rows = store.db.execute("SELECT hash, min(language), min(code), count(*) FROM units GROUP BY hash "
                            "ORDER BY min(id)").fetchall()
    fits = single_window(model, [r[2] for r in rows], [r[1] for r in rows])
    long = [r for r, ok in zip(rows, fits) if not ok]
    return LongUnits([r[0] for r in long], sum(r[3] for r in long), sum(r[3] for r in rows))


def _version(store: Store) -> str:
    n, top = store.db.execute("SELECT count(*), coalesce(max(id), 0) FROM units").fetchone()
    return f"{n}.{top}"  # unit ids are never reused: any change to the units changes this


def counted(store: Store, model: Any, target: str) -> tuple[int, int]:
    """(long units, all units) of an upgradable index: cached in meta (best effort: a read-only index or a
    busy one counts again next time)."""
    key = f"{target}:{model.embedding_fingerprint()}:{_version(store)}"
    cached = store.get_meta(COUNT_META) or ""
    if cached.rpartition(":")[0] == key:
        total = int(_version(store).split(".")[0])
        return int(cached.rpartition(":")[2]), total
    found = long_units(store, model)
    try:
        store.set_meta(**{COUNT_META: f"{key}:{found.units}"})
    except sqlite3.Error:
        pass
    return found.units, found.total


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
    n_long, total = counted(store, model, target)
    name = f"model '{model_name}'" if model_name else "the model"
    what = "a long-input read-out" if getattr(model, "fragment_head", None) is not None else \
        f"long inputs over up to {model.max_chunks} windows"
    exc = ModelUpgradeError(
        f"{path}: {name} gained {what} since this index was built; `conba index PATHS{index_flag(path)}` (the "
        f"paths it was built from) updates it, re-encoding only the {n_long:,} of its {total:,} functions longer "
        "than one window (the others keep their vectors)")
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
