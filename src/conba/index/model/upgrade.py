"""``conba index`` on an index whose model gained a long-input read-out: re-encode only the long functions.

When the index's fingerprint is the model's truncation fingerprint (:mod:`conba.index.model.upgrade_check`), the
writer (``Index.add``) upgrades the index in place before its usual run, instead of refusing the model:

1. the unit contents longer than one window are found with the model's tokenizer (no backbone run);
2. they are encoded with the model into the side table ``upgrade_vectors``, a batch per transaction (meta
   ``upgrade_target`` names the fingerprint they are for), so a killed upgrade keeps what it encoded and the
   next run encodes the rest; until step 3 the index is untouched and stays readable as it was;
3. the files holding those contents are staged unchanged (:mod:`conba.index.storage.staging`) and committed in one
   transaction that also swaps in the new vectors, recomputes those files' vectors
   (:func:`conba.index.files.vectors.refresh`) and records the new fingerprint: the staged files' units get new
   ids, as a changed file's do, so the vector structure's update (:mod:`conba.index.vectors.ivf_update` above
   ``ivf_above``) removes the old rows and adds the new ones like any changed function;
4. the vector structure and the manifest are written as at the end of every run.

Readers opening the index with the new model get :class:`~conba.index.errors.ModelUpgradeError`, which says
how many functions the upgrade re-encodes. Glossary: h distinct unit contents (content hashes), d width.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from conba.index import defaults
from conba.index.errors import CodeIndexError, ModelUpgradeError
from conba.index.files import vectors as file_vectors
from conba.index.model import identity
from conba.index.model import lazy as lazy_model
from conba.index.model.load import load_index_model
from conba.index.model.placement import apply_placement
from conba.index.model.upgrade_check import long_units, upgrade_target
from conba.index.storage import staging
from conba.utils.fault_injection import commit_delay, pause_after_commit
from conba.utils.io import read_json, write_json_atomic

__all__ = ["UpgradeReport", "add_model", "check_model", "first_check", "first_load", "load_model", "refuse_deferred",
           "run"]
TABLE = "upgrade_vectors"
TARGET_META = "upgrade_target"


@dataclass
class UpgradeReport:
    """What an upgrade did: ``units`` long functions (``contents`` distinct ones encoded by this run) got the
    model's long-input read-out, of ``total``; ``fingerprint`` is the index's new one."""
    units: int
    contents: int
    total: int
    fingerprint: str
    seconds: float

    def line(self) -> str:
        return (f"Upgraded {self.units:,} long functions to the model's long-input read-out "
                f"({self.contents:,} encoded, {self.seconds:.1f} s); {self.total - self.units:,} unchanged")

    def to_dict(self) -> dict[str, Any]:
        return {"upgraded": self.units, "encoded": self.contents, "unchanged": self.total - self.units,
                "fingerprint": self.fingerprint, "seconds": round(self.seconds, 3)}


# ---------------------------------------------------------------- hooks of conba.index.storage.index.Index
def check_model(idx: Any, model: Any) -> None:
    """``Index.check_model``: :func:`identity.check_model`; an upgradable index is upgraded while ``Index.add``
    asks for the model (:func:`add_model`), and refused with the reader's :class:`ModelUpgradeError` otherwise."""
    def check() -> None:
        idx.db_call(identity.check_model, idx.path, idx.store, model, idx.models.name, idx.engine, idx.models.options)

    try:
        check()
    except ModelUpgradeError:
        if not idx.models.upgrading:
            raise
        idx.upgrade_report = idx.db_call(run, idx, model)
        check()  # the index's fingerprint is the model's now (this records a calibrated threshold too)


def first_check(idx: Any, model: Any) -> None:
    """``Index.__init__`` with a model object: checked now; an upgradable index keeps it aside (:func:`load_model`)."""
    try:
        idx.check_model(model)
    except ModelUpgradeError:
        idx.models.loaded, idx.models.deferred = None, model


def first_load(idx: Any) -> None:
    """``Index.__init__`` with a model name: loaded and checked now; an upgradable index keeps it aside."""
    try:
        _ = idx.model
    except ModelUpgradeError as exc:
        idx.models.deferred = exc.model


def load_model(idx: Any) -> Any:
    """``Index.model`` when not loaded: the model kept aside by :func:`first_check` / :func:`first_load`,
    checked again (readers: :class:`ModelUpgradeError`; ``Index.add``: the upgrade), else
    :func:`load_index_model`."""
    deferred = idx.models.deferred
    if deferred is None:
        return load_index_model(idx)
    idx.check_model(deferred)
    idx.models.deferred = None
    return apply_placement(deferred, idx.placement, idx.engine)


def refuse_deferred(idx: Any) -> None:
    """``Index.manifest``: an index opened with a model kept aside (an upgrade it has not had) serves no vectors
    (``conba serve -m``, an API caller encoding queries itself): :class:`ModelUpgradeError`, as on opening."""
    if idx.models.deferred is not None and not idx.models.upgrading:
        idx.check_model(idx.models.deferred)


def add_model(idx: Any) -> Any:
    """``Index.add``'s model (:func:`conba.index.model.lazy.add_model`), upgrading an upgradable index first."""
    idx.models.upgrading = True
    try:
        if idx.models.deferred is not None:
            return idx.encoding_model()
        return lazy_model.add_model(idx)
    finally:
        idx.models.upgrading = False


# ---------------------------------------------------------------- the upgrade
def run(idx: Any, model: Any) -> UpgradeReport:
    """Upgrade the index of ``idx`` to ``model`` (see the module docstring); takes the index's lock."""
    t0 = time.perf_counter()
    store = idx.store
    with idx.write_lock():
        target = model.embedding_fingerprint()
        if upgrade_target(store, model) is None:  # upgraded meanwhile by another run: checked again
            return UpgradeReport(0, 0, store.count_units(), target, time.perf_counter() - t0)
        identity.require_engine(model, idx.engine)
        _prepare(store, target)
        found = long_units(store, model)
        done = {h for (h,) in store.db.execute(f"SELECT hash FROM {TABLE}")}
        todo = [h for h in found.hashes if h not in done]
        _encode(store, apply_placement(model, idx.placement, idx.engine), todo, idx.engine)
        before = store.get_meta("fingerprint")
        _commit(store, found.hashes, target, idx.models.name or store.get_meta("model"))
        _carry_manifest(idx.path / "manifest.json", before, target)
        idx.finalize()
    return UpgradeReport(found.units, len(todo), found.total, target, time.perf_counter() - t0)


def _prepare(store: Any, target: str) -> None:
    """The side table, emptied unless it holds vectors for ``target`` (a killed upgrade to the same model)."""
    with store.transaction() as db:
        db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (hash TEXT PRIMARY KEY, vector BLOB NOT NULL, "
                   "crc INTEGER NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = ?", (TARGET_META,)).fetchone()
        if row is None or row[0] != target:
            db.execute(f"DELETE FROM {TABLE}")
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (TARGET_META, target))


def _encode(store: Any, model: Any, hashes: list[str], engine: str) -> None:
    """Encode the unit contents ``hashes`` into the side table, longest first, a batch per transaction."""
    if not hashes:
        return
    from tqdm.auto import tqdm

    every = defaults.commit_every()  # contents per transaction, as builder.encode_missing
    delay = commit_delay()  # crash tests (conba.utils.fault_injection), as builder's
    rows = []
    for start in range(0, len(hashes), 500):
        chunk = hashes[start:start + 500]
        rows += store.db.execute(f"SELECT hash, min(language), min(code) FROM units WHERE hash IN "
                                 f"({','.join('?' * len(chunk))}) GROUP BY hash", chunk).fetchall()
    rows.sort(key=lambda r: -len(r[2]))
    with tqdm(total=len(rows), desc="upgrading", unit="fn", disable=None) as bar:
        for start in range(0, len(rows), every):
            part = rows[start:start + every]
            vecs = np.ascontiguousarray(model.encode([r[2] for r in part], languages=[r[1] for r in part],
                                                     show_progress_bar=False, normalize=True, engine=engine),
                                        dtype=np.float32)
            with store.transaction() as db:
                db.executemany(f"INSERT OR REPLACE INTO {TABLE}(hash, vector, crc) VALUES (?, ?, ?)",
                               [(r[0], v.tobytes(), zlib.crc32(v.tobytes())) for r, v in zip(part, vecs)])
            bar.update(len(part))
            pause_after_commit(delay)


def _commit(store: Any, hashes: list[str], target: str, name: str | None) -> None:
    """Stage the files holding the long contents unchanged, then swap their units (new ids), the new vectors,
    those files' vectors, the fingerprint and the model's ``name`` in one transaction (:func:`staging.commit`)."""
    have = store.db.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
    if have < len(hashes):
        raise CodeIndexError(f"{store.path}: the upgrade has {have} of {len(hashes)} new vectors; "
                             "re-run `conba index`")
    with store.transaction() as db:
        db.execute("DELETE FROM staged_units")
        db.execute("DELETE FROM staged_files")
        db.execute(f"INSERT INTO staged_files(path, language, size, mtime_ns, removed) SELECT path, language, size, "
                   f"mtime_ns, 0 FROM files WHERE path IN (SELECT DISTINCT u.file FROM units u JOIN {TABLE} x "
                   "ON u.hash = x.hash) ORDER BY path")
        db.execute("INSERT INTO staged_units(file, qualname, language, start_line, end_line, kind, hash, code) "
                   "SELECT file, qualname, language, start_line, end_line, kind, hash, code FROM units "
                   "WHERE file IN (SELECT path FROM staged_files) ORDER BY id")

    def swap(db: Any) -> None:
        db.execute(f"INSERT OR REPLACE INTO vectors(hash, vector, crc) SELECT hash, vector, crc FROM {TABLE}")
        db.execute(f"DELETE FROM {TABLE}")
        file_vectors.refresh(db)  # the staged files: those whose units changed

    staging.commit(store, then=swap, fingerprint=target, model=name, state="building", upgrade_target=None)


def _carry_manifest(path: Any, before: str | None, target: str) -> None:
    """The last manifest, relabelled with the new fingerprint while the index is "building" (readers wait for
    the next one), so that the vector structure is updated from it (:func:`conba.index.vectors.structure.write`)
    rather than rebuilt: its rows are the old unit ids, which the update removes."""
    try:
        manifest = read_json(path)
    except (OSError, ValueError):
        return
    if isinstance(manifest, dict) and before is not None and manifest.get("fingerprint") == before:
        write_json_atomic(path, {**manifest, "fingerprint": target})
