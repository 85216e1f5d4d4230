"""Past one index: a code index split into shards by path prefix, searched in parallel and merged.

A sharded index is a folder with ``shards.json`` and one ordinary conba index per shard
(``shard-0``, ``shard-1``...). Every top-level folder of the indexed tree (its *prefix*) belongs to
one shard for good: a new folder goes to the shard with the fewest files, so a re-run is an ordinary
incremental ``Index.add`` in each shard (changed files re-encoded, deleted ones dropped, each shard's
vector structure updated in place). Source files at the top level itself go to shard 0. The layout file is
read and checked by :mod:`conba.index.scale.shard_layout`; a shard in use that is missing or damaged is an error.

:class:`ShardSearcher` serves each shard from its own process (each holds only its shard's vectors)
and merges the shards' top ``k`` by score: exact search is exact over the whole (a shard's top k
holds every global top-k hit it owns). A shard process is the unit that moves to another machine
(docs/BENCHMARKS.md "Past one machine" has the 100M plan).

>>> sharded = ShardedIndex("/srv/idx", shards=2, model="default-fast", engine="onnx")
>>> sharded.add("/srv/monorepo")
>>> with sharded.searcher() as s:
...     hits = s.search_vectors(sharded.encode(["def gcd(a, b): ..."]), k=10)[0]
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from conba.index.errors import CodeIndexError, NoSourceFilesError, SourceError
from conba.index.scale.shard_layout import MAX_SHARDS, SHARDS_FILE, new_layout, read_layout, shards_in_use
from conba.source.records import AddReport, Hit
from conba.source.walker import top_level
from conba.utils.io import read_json, write_json_atomic

__all__ = ["MAX_SHARDS", "SHARDS_FILE", "ShardSearcher", "ShardedIndex", "merge"]


def _count_files(path: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(path))


class ShardedIndex:
    """A sharded index in ``folder``; ``shards`` (1..:data:`MAX_SHARDS`) is required for a new one (fixed
    afterwards). ``model`` and other keyword arguments are passed to each shard's :class:`conba.index.Index`."""

    def __init__(self, folder: str | os.PathLike, shards: int | None = None, model: Any = None, **index_kwargs: Any):
        self.folder = Path(folder)
        path = self.folder / SHARDS_FILE
        if path.exists():
            self.layout = read_layout(path)
            count = self.layout["shards"]
            if shards is not None and shards != count:
                raise CodeIndexError(f"{path}: the index has {count} shards, not {shards} (shards are fixed; "
                                     "index into a new folder to change them)")
        elif shards is None:
            raise CodeIndexError(f"{self.folder}: no sharded index here; give the number of shards (>= 1)")
        elif (self.folder / "index.sqlite").exists():
            raise CodeIndexError(f"{self.folder}: an ordinary (unsharded) index; make the sharded one in a new folder")
        else:
            self.layout = new_layout(shards, self.folder)
        self.model, self.index_kwargs = model, index_kwargs
        self.removed: list[int] = []  # the shards the last add() emptied (their folder deleted)

    @property
    def shards(self) -> list[Path]:
        return [self.folder / f"shard-{i}" for i in range(int(self.layout["shards"]))]

    def _assign(self, root: Path) -> list[tuple[list[str], list[str]]]:
        """(paths, excluded folders) for each shard: its top-level folders (new ones to the shard with fewest
        files); shard 0 also gets the top-level files, by walking ``root`` itself without the other shards'
        folders, so that they are read (and skipped) as `conba index ROOT` reads them. Vendored, hidden and
        gitignored folders belong to no shard."""
        prefixes: dict[str, int] = self.layout["prefixes"]
        load = [0] * len(self.shards)
        folders, files = top_level(root)
        sizes = {p.name: _count_files(p) for p in folders}
        for name, shard in prefixes.items():
            load[shard] += sizes.get(name, 0)
        for name in sorted(set(sizes) - set(prefixes), key=lambda n: -sizes[n]):
            prefixes[name] = load.index(min(load))
            load[prefixes[name]] += sizes[name]
        owned: list[list[str]] = [[] for _ in self.shards]
        for name, shard in sorted(prefixes.items()):
            if name in sizes:
                owned[shard].append(str(root / name))
        plan: list[tuple[list[str], list[str]]] = [(paths, []) for paths in owned]
        if owned[0] or files:
            plan[0] = ([str(root)], [str(root / name) for name, shard in prefixes.items() if shard != 0])
        return plan

    def add(self, root: str | os.PathLike, **add_kwargs: Any) -> list[AddReport | None]:
        """Index the tree ``root`` (always the same root), shard by shard; a shard with nothing to index
        is skipped (None in the reports) and its folder deleted (listed in :attr:`removed`)."""
        from conba.index import Index

        root = Path(os.path.abspath(root))
        if not root.is_dir():
            raise SourceError(f"{root}: a sharded index needs a folder")
        if self.layout["root"] not in (None, str(root)):
            raise CodeIndexError(f"{self.folder}: sharded over {self.layout['root']}, not {root}")
        self.layout["root"] = str(root)
        plan = self._assign(root)
        self.folder.mkdir(parents=True, exist_ok=True)
        # before any shard: the assignment is fixed, and a search needs every shard in use (a shard this run
        # has not completed yet is an error there, never a silent partial answer)
        self.layout["in_use"] = [i for i, (paths, _) in enumerate(plan) if paths]
        write_json_atomic(self.folder / SHARDS_FILE, self.layout)
        reports: list[AddReport | None] = []
        self.removed = []
        for i, (folder, (paths, exclude)) in enumerate(zip(self.shards, plan)):
            report = None
            if paths:
                try:
                    with Index(folder, **self._options_for(folder)) as idx:
                        report = idx.add(paths, exclude=exclude, **add_kwargs)
                except NoSourceFilesError:  # only non-code files (docs/, data/...): as `conba index ROOT` skips them
                    pass
            if report is None and folder.exists():  # every folder of the shard is gone: so is what it indexed
                shutil.rmtree(folder, ignore_errors=True)
                self.removed.append(i)
            reports.append(report)
        self.layout["in_use"] = [i for i, r in enumerate(reports) if r is not None]
        write_json_atomic(self.folder / SHARDS_FILE, self.layout)
        if not self.layout["in_use"]:
            raise NoSourceFilesError(f"{root}: no source files found")
        return reports

    def _options_for(self, folder: Path) -> dict[str, Any]:
        """The ``Index`` arguments for a shard: a new one (a new top-level folder, a deleted shard) without a
        model named gets the model, view and engine of a built shard, so that the shards never mix models."""
        options = {"model": self.model, **self.index_kwargs}
        if self.model is not None or options.get("rebuild") or (folder / "index.sqlite").exists():
            return options
        for other in self.shards:
            if other != folder and (other / "index.sqlite").exists() and (other / "manifest.json").is_file():
                built = _manifest(other)
                like = {"model": built.get("model"), "view": built.get("view"), "engine": built.get("engine")}
                return {**options, **{k: v for k, v in like.items() if v is not None and options.get(k) is None}}
        return options

    @property
    def built(self) -> list[Path]:
        """The folders of the shards in use, each holding a completed index (a shard whose ``--rebuild`` swap
        was killed half-way is recovered first: :func:`conba.index.storage.rebuild.recover`). A shard in use that is
        missing or incomplete is an error naming it and the fix."""
        from conba.index.storage.rebuild import recover

        folders = []
        for i in shards_in_use(self.layout, self.folder):
            folder = recover(self.folder / f"shard-{i}")
            if not (folder / "manifest.json").is_file():
                raise CodeIndexError(f"{folder}: shard {i} of the sharded index has no completed index (deleted, "
                                     f"damaged, or a `conba index` run has not finished it); re-run "
                                     f"`conba index {self._where()} --index {shlex.quote(str(self.folder))}`")
            folders.append(folder)
        return folders

    def _where(self) -> str:
        """The indexed root, quoted for a shell (the `conba index` command that brings every shard up to date)."""
        return shlex.quote(self.layout.get("root") or "ROOT")

    def encode(self, codes: list[str], languages: list[str] | None = None) -> np.ndarray:
        """Query vectors (b, d) L2-normalised, as :meth:`conba.index.Index.search` encodes a query: with the
        model's query prompt when it has one, on the engine of the shards (all share one fingerprint)."""
        from conba.data.records import normalize_language
        from conba.index import Index

        built = self.built
        if not built:
            raise CodeIndexError(f"{self.folder}: no shard has been indexed yet")
        models = {f.name: _manifest(f) for f in built}
        if len({m.get("fingerprint") for m in models.values()}) > 1:
            which = ", ".join(f"{name}: {m.get('model')}" for name, m in models.items())
            raise CodeIndexError(f"{self.folder}: the shards were built with different models ({which}), e.g. by "
                                 f"a rebuild that was stopped; re-run `conba index {self._where()} --index "
                                 f"{shlex.quote(str(self.folder))} --rebuild` with the model "
                                 "you want")
        langs = [normalize_language(lang) if lang else "" for lang in (languages or [""] * len(codes))]
        with Index(built[0], model=self.model, **self._options("model_options", "view", "engine")) as idx:
            from conba.index.model.query import query_model

            return query_model(idx).encode_query(codes, languages=langs, show_progress_bar=False, engine=idx.engine)

    def search(self, code: str, k: int = 10, language: str | None = None,
               query_language: str | None = None) -> list[Hit]:
        """The ``k`` best hits for ``code`` over all shards, in this process (one shard after another;
        :meth:`searcher` keeps every shard loaded in its own process instead)."""
        from conba.index import Index

        query = self.encode([code], [query_language or ""])
        hits: list[Hit] = []
        for folder in self.built:
            with Index(folder, create=False, **self._options("lexical_weight")) as idx:
                hits += idx.search_vectors(query, k=k, language=language, codes=[code])[0]
        return merge([hits], k)[0]

    def _options(self, *names: str) -> dict[str, Any]:
        """The given ``Index`` keyword arguments that were set (for the readers of the shards)."""
        return {n: self.index_kwargs[n] for n in names if self.index_kwargs.get(n) is not None}

    def searcher(self) -> ShardSearcher:
        return ShardSearcher(self.built)


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        manifest = read_json(folder / "manifest.json")
    except (OSError, ValueError) as exc:
        raise CodeIndexError(f"{folder}: damaged shard ({exc})") from None
    if not isinstance(manifest, dict):
        raise CodeIndexError(f"{folder / 'manifest.json'}: damaged shard (not a manifest)")
    return manifest


def merge(per_query: list[list[Hit]], k: int) -> list[list[Hit]]:
    """The ``k`` best of each query's hits from all shards, by score (ties: the order given)."""
    return [sorted(hits, key=lambda h: -h.score)[:k] for hits in per_query]


def _serve(folder: str, conn: Any) -> None:
    """A shard process: load the shard's index once, answer (queries, k, language, codes) until None."""
    from conba.index import Index

    try:
        idx = Index(folder)
        idx.load_vectors()
        conn.send(("ready", idx.manifest().get("count")))
    except Exception as exc:  # reported to the parent in one line
        conn.send(("error", f"{folder}: {exc}"))
        return
    while (msg := conn.recv()) is not None:
        try:
            queries, k, language, codes = msg
            conn.send(("ok", idx.search_vectors(queries, k, language, codes=codes)))
        except Exception as exc:
            conn.send(("error", f"{folder}: {exc}"))
    idx.close()


class ShardSearcher:
    """One process per shard; ``search_vectors`` sends the queries to all, merges by score."""

    def __init__(self, folders: list[Path]):
        if not folders:
            raise CodeIndexError("no shard has been indexed yet")
        ctx = mp.get_context("spawn")
        self.conns, self.procs = [], []
        for folder in folders:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(str(folder), child), daemon=True)
            proc.start()
            self.conns.append(parent)
            self.procs.append(proc)
        self.counts = [self._reply(c) for c in self.conns]

    @staticmethod
    def _reply(conn: Any) -> Any:
        status, value = conn.recv()
        if status == "error":
            raise CodeIndexError(value)
        return value

    def search_vectors(self, queries: np.ndarray, k: int = 10, language: str | None = None,
                       codes: list[str] | None = None) -> list[list[Hit]]:
        """The ``k`` best hits per query (b, d) over all shards (scores from each shard's own search; with
        the queries' ``codes``, fused with each shard's lexical channel as :meth:`Index.search_vectors`)."""
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        for conn in self.conns:
            conn.send((queries, k, language, codes))
        per_shard = [self._reply(conn) for conn in self.conns]
        return merge([[h for hits in shard_hits for h in hits] for shard_hits in zip(*per_shard)], k)

    def close(self) -> None:
        for conn, proc in zip(self.conns, self.procs):
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()

    def __enter__(self) -> ShardSearcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
