"""Past one index: a code index split into shards by path prefix, searched in parallel and merged.

A sharded index is a folder with ``shards.json`` and one ordinary conba index per shard
(``shard-0``, ``shard-1``...). Every top-level folder of the indexed tree (its *prefix*) belongs to
one shard for good: a new folder goes to the shard with the fewest files, so a re-run is an ordinary
incremental ``Index.add`` in each shard (changed files re-encoded, deleted ones dropped, each shard's
vector structure updated in place). Source files at the top level itself go to shard 0.

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
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from conba.index.errors import CodeIndexError, SourceError
from conba.source.records import AddReport, Hit
from conba.utils.io import read_json, write_json_atomic

SHARDS_FILE = "shards.json"


def _count_files(path: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(path))


class ShardedIndex:
    """A sharded index in ``folder``; ``shards`` is required for a new one (fixed afterwards).
    ``model`` and other keyword arguments are passed to each shard's :class:`conba.index.Index`."""

    def __init__(self, folder: str | os.PathLike, shards: int | None = None, model: Any = None, **index_kwargs: Any):
        self.folder = Path(folder)
        path = self.folder / SHARDS_FILE
        if path.exists():
            try:
                self.layout = read_json(path)
                count = int(self.layout["shards"])
            except (ValueError, KeyError, TypeError) as exc:
                raise CodeIndexError(f"{path}: not a shard layout ({exc})") from None
            if shards is not None and shards != count:
                raise CodeIndexError(f"{path}: the index has {count} shards, not {shards} (shards are fixed; "
                                     "index into a new folder to change them)")
        elif shards is None or shards < 1:
            raise CodeIndexError(f"{self.folder}: no sharded index here; give the number of shards (>= 1)")
        elif (self.folder / "index.sqlite").exists():
            raise CodeIndexError(f"{self.folder}: an ordinary (unsharded) index; make the sharded one in a new folder")
        else:
            self.layout = {"format": "conba-shards", "shards": int(shards), "by": "top-level folder",
                           "root": None, "prefixes": {}}
        self.model, self.index_kwargs = model, index_kwargs

    @property
    def shards(self) -> list[Path]:
        return [self.folder / f"shard-{i}" for i in range(int(self.layout["shards"]))]

    def _assign(self, root: Path) -> list[list[str]]:
        """The paths each shard indexes: its top-level folders (new ones to the shard with fewest files)
        and, for shard 0, the top-level files."""
        prefixes: dict[str, int] = self.layout["prefixes"]
        load = [0] * len(self.shards)
        entries = sorted(p for p in root.iterdir() if not p.name.startswith("."))
        sizes = {p.name: _count_files(p) for p in entries if p.is_dir()}
        for name, shard in prefixes.items():
            load[shard] += sizes.get(name, 0)
        for name in sorted(set(sizes) - set(prefixes), key=lambda n: -sizes[n]):
            prefixes[name] = load.index(min(load))
            load[prefixes[name]] += sizes[name]
        out: list[list[str]] = [[] for _ in self.shards]
        for name, shard in sorted(prefixes.items()):
            if (root / name).is_dir():
                out[shard].append(str(root / name))
        out[0] += [str(p) for p in entries if p.is_file()]
        return out

    def add(self, root: str | os.PathLike, **add_kwargs: Any) -> list[AddReport | None]:
        """Index the tree ``root`` (always the same root), shard by shard; a shard with nothing to index
        is skipped (None in the reports)."""
        from conba.index import Index

        root = Path(os.path.abspath(root))
        if not root.is_dir():
            raise SourceError(f"{root}: a sharded index needs a folder")
        if self.layout["root"] not in (None, str(root)):
            raise CodeIndexError(f"{self.folder}: sharded over {self.layout['root']}, not {root}")
        self.layout["root"] = str(root)
        plan = self._assign(root)
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.folder / SHARDS_FILE, self.layout)  # before any shard: the assignment is fixed
        reports: list[AddReport | None] = []
        for folder, paths in zip(self.shards, plan):
            if not paths:  # every folder of the shard is gone: so is everything it indexed
                shutil.rmtree(folder, ignore_errors=True)
                reports.append(None)
                continue
            with Index(folder, model=self.model, **self.index_kwargs) as idx:
                reports.append(idx.add(paths, **add_kwargs))
        return reports

    @property
    def built(self) -> list[Path]:
        """The shard folders that hold a completed index (a shard whose ``--rebuild`` swap was killed
        half-way is recovered first: :func:`conba.index.rebuild.recover`)."""
        from conba.index.rebuild import recover

        return [f for f in map(recover, self.shards) if (f / "manifest.json").exists()]

    def encode(self, codes: list[str], languages: list[str] | None = None) -> np.ndarray:
        """Query vectors (b, d) L2-normalised, as :meth:`conba.index.Index.search` encodes a query: with the
        model's query prompt when it has one, on the engine of the shards (all share one fingerprint)."""
        from conba.data.records import normalize_language
        from conba.index import Index

        built = self.built
        if not built:
            raise CodeIndexError(f"{self.folder}: no shard has been indexed yet")
        prints = {read_json(f / "manifest.json").get("fingerprint") for f in built}
        if len(prints) > 1:
            raise CodeIndexError(f"{self.folder}: shards were built with different models")
        langs = [normalize_language(lang) if lang else "" for lang in (languages or [""] * len(codes))]
        with Index(built[0], model=self.model, **self._options("model_options", "view", "engine")) as idx:
            return idx._encoding_model().encode_query(codes, languages=langs, show_progress_bar=False,
                                                      engine=idx.engine)

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
