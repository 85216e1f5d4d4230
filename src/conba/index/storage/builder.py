"""Indexing: walk -> extract changed files -> encode what has no embedding -> write the vector file.

Each step commits to SQLite in transactions, so ``kill -9`` at any point loses at most the batch
in flight; the next run skips unchanged files (size + mtime), encodes only content hashes that
have no embedding yet, and rebuilds the FAISS file from SQLite. The changed files' units are staged
(:mod:`conba.index.storage.staging`) and swapped in by :func:`commit` after encoding, so a killed run leaves the
index as the last completed run left it.

Environment hooks: ``CONBA_INDEX_COMMIT_EVERY`` (embeddings per transaction, default 256) and
``CONBA_INDEX_TEST_DELAY`` (seconds to sleep after each committed batch; crash tests:
:mod:`conba.utils.fault_injection`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from conba.index import defaults
from conba.index.errors import NoSourceFilesError, SourceError
from conba.index.files import vectors as file_vectors
from conba.index.storage import staging
from conba.index.storage.store import Store, db_path, fs_path, shown_path
from conba.source.extract import extract_units
from conba.source.filters import DEFAULT_MAX_FILE_SIZE, Skip, index_error_message, read_source
from conba.source.records import AddReport
from conba.source.walker import Discovery, discover
from conba.utils.fault_injection import commit_delay, pause_after_commit

# Raise when extract_units cuts unchanged text differently (a fix): an index built with another version
# (or before the version was recorded) re-extracts every file once, changed or not; vectors are reused
# by content, so only units whose code changed are encoded again. 2: doc comments above attributes,
# Rust ``///`` docs. 3: C++ ``template <...>`` lines and JS/TS ``export`` with the doc above them.
# 4: named functions nested in a function body are units of their own, elided from their parent.
# 5: C/C++ behind macros (export / storage / OF((...)) macros, K&R, functions after a syntax error:
# conba.source.c_macros, conba.source.c_recover); C++ free functions named like their namespace.
EXTRACTOR_VERSION = 5
FILES_PER_TRANSACTION = 100


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _gone(path: str) -> bool | None:
    """True when ``path`` no longer exists, False when it does, None when that cannot be told
    (a parent folder cannot be searched): only what is really gone is removed from the index."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return None
    return False


def scan(store: Store, paths: Iterable[str | os.PathLike], report: AddReport,
         max_file_size: int = DEFAULT_MAX_FILE_SIZE, exclude: Iterable[str | os.PathLike] = ()) -> int:
    """Bring the files/units tables up to date with the tree (no encoding). Returns the number of
    units in changed files. Bad explicit paths raise :class:`SourceError` before anything is written.
    What cannot be read this run (a file, a folder) keeps what is indexed of it, with a warning."""
    found = discover(paths, max_size=max_file_size, exclude=exclude)
    report.skipped.extend((shown_path(db_path(path)), reason) for path, reason in found.skipped)
    if not found.files:
        where = ", ".join(str(p) for p in paths)
        summary = f" ({len(found.skipped)} skipped: {report.skip_summary()})" if found.skipped else ""
        raise NoSourceFilesError(f"{where}: no source files found{summary}")
    for cand in found.files:  # files named explicitly must be fine before anything is written
        if cand.explicit:
            try:
                read_source(cand.path, max_file_size)
            except Skip as exc:
                raise SourceError(index_error_message(exc)) from None
    # the changes are staged (conba.index.storage.staging): the index stays as the last run left it, usable by
    # read-only commands, until commit() swaps them in after encoding
    staging.clear(store)
    states = store.file_states()
    current = store.get_meta("extractor") == str(EXTRACTOR_VERSION)  # else re-extract unchanged files too
    kept: set[str] = set()
    pending: list[tuple[str, str, int, int, list]] = []
    changed_units = 0
    for cand in found.files:
        report.files_seen += 1
        stored = db_path(cand.path)
        if current and states.get(stored) == (cand.size, cand.mtime_ns):
            kept.add(stored)
            if not os.access(cand.path, os.R_OK):
                report.warnings.append(f"{shown_path(stored)}: unreadable; kept what was indexed of it")
            continue
        try:
            text = read_source(cand.path, max_file_size)
        except Skip as exc:
            report.skipped.append((shown_path(db_path(exc.path)), exc.reason))
            if exc.reason == "unreadable" and stored in states:
                kept.add(stored)
                report.warnings.append(f"{shown_path(stored)}: unreadable; kept what was indexed of it")
            continue
        kept.add(stored)
        errors: list[int] = []
        units = extract_units(stored, text, cand.language, errors)
        if errors:  # its functions are those the extractor could recover (conba.source.c_recover)
            report.syntax_errors.append((shown_path(stored), errors[0]))
        pending.append((cand.path, cand.language, cand.size, cand.mtime_ns, units))
        report.files_changed += 1
        changed_units += len(units)
        if len(pending) >= FILES_PER_TRANSACTION:
            staging.stage_files(store, pending)
            pending = []
    if pending:
        staging.stage_files(store, pending)
    gone = _removed(states, kept, found, report)
    report.files_removed = staging.stage_removals(store, gone) if gone else 0
    return changed_units


def commit(store: Store) -> None:
    """Swap the staged changes of :func:`scan` into the index and mark it being written (the vector file
    and manifest are rewritten next); the extractor version is recorded with them."""
    staging.commit(store, then=file_vectors.refresh, state="building", extractor=str(EXTRACTOR_VERSION))


def _removed(states: dict, kept: set[str], found: Discovery, report: AddReport) -> list[str]:
    """The stored paths to remove: deleted, or now left out by the walk (gitignored, excluded...).
    Those under a folder that could not be read, or whose existence cannot be told, are kept."""
    explicit = {c.path for c in found.files if c.explicit}
    unreadable = [path for path, reason in found.skipped if reason == "unreadable"]
    held: dict[str, int] = {}
    gone: list[str] = []
    for stored in states:
        if stored in kept:
            continue
        path = fs_path(stored)
        blocked = next((u for u in unreadable if _under(path, [u])), None)
        if blocked is not None:
            held[blocked] = held.get(blocked, 0) + 1
            continue
        missing = _gone(path)
        if missing is None:
            held[path] = held.get(path, 0) + 1
        elif missing or _under(path, found.roots) or path in explicit:
            gone.append(stored)
    for path, n in held.items():
        report.warnings.append(f"{shown_path(db_path(path))}: cannot be read; kept the {n} file(s) "
                               "indexed from it until it can be read or is deleted")
    return gone


def encode_missing(store: Store, model: Any, report: AddReport, batch_size: int | None = None,
                   commit_every: int | None = None, show_progress: bool = False,
                   on_batch: Callable[[int], None] | None = None, engine: str = "torch") -> None:
    """Embed every unit content that has no vector yet with ``engine`` (torch, onnx, onnx-fp32),
    committing every ``commit_every``."""
    commit_every = defaults.commit_every(commit_every)
    delay = commit_delay()  # crash tests (conba.utils.fault_injection)
    # longest first, so each committed chunk holds units of similar length: the engine's batches (sorted
    # within a chunk) then carry less padding (default-fast + ONNX on 4,695 functions: 55.5 s -> 53.7 s)
    missing = sorted(store.missing_vectors(), key=lambda row: -len(row[2]))
    report.units_encoded = len(missing)
    if not missing:
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=len(missing), desc="encoding", unit="fn", disable=not show_progress, smoothing=0.1)
    view = getattr(model, "view", "raw")
    report.view = view
    try:
        for start in range(0, len(missing), commit_every):
            chunk = missing[start:start + commit_every]
            codes, langs = [code for _, _, code in chunk], [lang for _, lang, _ in chunk]
            if view != "raw":  # viewed here (not in encode) to count the units that stayed raw
                from conba.syntax.view import apply_views

                codes, stats = apply_views(codes, langs, view)
                report.view_fallbacks += stats.fallbacks
                vecs = model.encode(codes, languages=langs, batch_size=batch_size, show_progress_bar=False,
                                    normalize=True, view="raw", engine=engine)
            else:
                vecs = model.encode(codes, languages=langs, batch_size=batch_size, show_progress_bar=False,
                                    normalize=True, engine=engine)
            store.add_vectors([h for h, _, _ in chunk], vecs)
            bar.update(len(chunk))
            if on_batch is not None:
                on_batch(len(chunk))
            pause_after_commit(delay)
    finally:
        bar.close()

