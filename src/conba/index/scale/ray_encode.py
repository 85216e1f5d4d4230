"""Encode an index's missing units on a Ray cluster: ``conba index PATH --ray [ADDRESS]``.

The driver (this process) discovers and extracts units as usual and stays the index's single
writer; only the encoding moves to the cluster: the units without a vector become a Ray Dataset
(one block per commit, longest snippets first so blocks pad little), ``map_batches`` runs them
through an actor pool with one model per actor (one actor per GPU when the cluster has GPUs, else
one per ``cpus_per_actor`` CPUs), and the driver writes each block's vectors to SQLite as it
arrives. Killing the driver loses at most the blocks in flight; the next run encodes the rest.

Actors load the model by name (``default``, ``zero-shot``, an HF name); a model folder on the
driver is shipped to them through the object store, so workers need conba but not the folder.
Each actor checks that its model's embedding fingerprint equals the driver's and encodes with the
index's engine (``--engine``): torch runs one actor per GPU when there are GPUs (``num_gpus=1``, the
model on its GPU in ``--dtype``, float16 by default) unless ``--device cpu``; ``--device cuda`` on a
cluster without GPUs is an error; the ONNX engines run on CPU (ONNX Runtime's CPU provider), so they
always get CPU actors. Optional:
``pip install 'conba[ray]'``; imported only with ``--ray``. Glossary: n units, d embedding size.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conba.errors import ConfigError
from conba.index import defaults
from conba.index.errors import CodeIndexError
from conba.index.storage.store import Store
from conba.source.records import AddReport
from conba.utils.fault_injection import commit_delay, pause_after_commit

RAY_HINT = "pip install 'conba[ray]'"


def import_ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is the part we need
    except ImportError:
        raise CodeIndexError(f"--ray needs Ray Data: {RAY_HINT}") from None
    return ray


@dataclass
class ModelSource:
    """How an actor gets the driver's model: ``name`` for load_model, or a folder's files shipped along."""

    name: str
    fingerprint: str                       # the embedding fingerprint every actor must reproduce
    files: dict[str, bytes] | None = None  # relative path -> bytes of a model folder
    options: dict | None = None            # load_model's pooling / trust_remote_code (the index records them)


def model_source(name: str, fingerprint: str, options: dict | None = None) -> ModelSource:
    folder = Path(name)
    if not folder.is_dir():
        return ModelSource(name, fingerprint, options=options)
    files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return ModelSource(folder.name, fingerprint, files, options)


class EncodeActor:
    """One model per Ray actor; ``__call__`` embeds a batch {hash, language, code} -> {hash, vector, pid}."""

    def __init__(self, source: ModelSource, batch_size: int | None, threads: int, engine: str = "torch",
                 gpu: bool = False, dtype: str = "auto"):
        from conba.engine.device import place_model
        from conba.index.model.identity import require_engine
        from conba.model import load_model
        from conba.settings import apply_threads

        apply_threads(max(1, threads))
        name = source.name
        if source.files is not None:
            folder = Path(tempfile.mkdtemp(prefix="conba-model-")) / source.name
            for rel, data in source.files.items():
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder / rel).write_bytes(data)
            name = str(folder)
        self.model = load_model(name, **(source.options or {}))
        require_engine(self.model, engine)
        got = self.model.embedding_fingerprint()
        place_model(self.model, "cuda" if gpu else "cpu", dtype, engine)  # Ray gives the actor its GPU as cuda
        if got != source.fingerprint:
            raise RuntimeError(f"Ray worker loaded model '{source.name}' with fingerprint {got}, the driver's is "
                               f"{source.fingerprint}: install the same conba version on every node")
        self.batch_size, self.engine = batch_size, engine

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.model.encode([str(c) for c in batch["code"]], languages=[str(x) for x in batch["language"]],
                                    batch_size=self.batch_size, show_progress_bar=False, normalize=True,
                                    engine=self.engine)
        return {"hash": batch["hash"], "vector": np.asarray(vectors, dtype=np.float32),
                "pid": np.full(len(vectors), os.getpid(), dtype=np.int64)}


class RayEncoder:
    """An ``Index.add(encoder=...)`` that encodes on Ray. ``address``: a cluster (``ray://...``,
    ``HOST:PORT``, ``auto``), or None for ``$RAY_ADDRESS`` / a running local cluster / a new local one.
    After a run, ``actors`` holds the size of the pool and ``worker_pids`` the processes that encoded."""

    device: str = "auto"  # --device: auto / cuda use the cluster's GPUs (torch engine), cpu never
    dtype: str = "auto"   # --dtype of the actors' models

    def __init__(self, address: str | None = None, model_name: str | None = None, cpus_per_actor: int = 1,
                 max_actors: int | None = None, device: str = "auto", dtype: str = "auto"):
        if cpus_per_actor < 1:
            raise ConfigError("cpus_per_actor must be >= 1")
        self.device, self.dtype = str(device).lower(), dtype  # auto: GPU actors when the cluster has GPUs
        import_ray()  # fail before the index is touched
        self.address, self.model_name = address or None, model_name
        self.cpus_per_actor, self.max_actors = cpus_per_actor, max_actors
        self.actors = 0
        self.worker_pids: set[int] = set()

    def connect(self) -> Any:
        ray = import_ray()
        if not ray.is_initialized():
            ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING)
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        ctx.enable_auto_log_stats = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        return ray

    def _pool(self, ray: Any, blocks: int, engine: str = "torch") -> tuple[int, dict[str, float], int]:
        """(actors, resources per actor, threads per actor) for the cluster's CPUs / GPUs (GPUs: torch only)."""
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0)) if engine == "torch" and self.device != "cpu" else 0
        if not gpus and self.device.startswith("cuda"):
            why = f" for engine {engine!r}" if engine != "torch" else ""
            raise CodeIndexError(f"--device {self.device}: the Ray cluster has no GPUs{why}; use --device auto or cpu")
        if gpus:
            size, per_actor, threads = gpus, {"num_gpus": 1.0, "num_cpus": 1.0}, 1
        else:
            cpus = max(1, int(resources.get("CPU", 1)))
            size = max(1, cpus // self.cpus_per_actor)
            per_actor, threads = {"num_cpus": float(min(self.cpus_per_actor, cpus))}, min(self.cpus_per_actor, cpus)
        if self.max_actors:
            size = min(size, self.max_actors)
        return max(1, min(size, blocks)), per_actor, threads

    def __call__(self, store: Store, model: Any, report: AddReport, batch_size: int | None = None,
                 commit_every: int | None = None, show_progress: bool = False,
                 on_batch: Callable[[int], None] | None = None, engine: str = "torch") -> None:

        commit_every = defaults.commit_every(commit_every)
        delay = commit_delay()  # crash tests (conba.utils.fault_injection)
        missing = store.missing_vectors()
        report.units_encoded = len(missing)
        if not missing:
            return
        name = self.model_name or store.get_meta("model")
        if not name:
            raise CodeIndexError("--ray needs a model name or folder (an in-memory model cannot be shipped)")
        from conba.index.model.identity import stored_options

        source = model_source(name, model.embedding_fingerprint(), stored_options(store))
        if engine != "torch":  # export on the driver first: actors of this node find it in the cache
            model.encode(["x"], show_progress_bar=False, engine=engine)
        ray = self.connect()
        import pyarrow as pa

        missing.sort(key=lambda row: -len(row[2]))  # similar lengths per block: little padding
        tables = [pa.table({"hash": [h for h, _, _ in chunk], "language": [lang for _, lang, _ in chunk],
                            "code": [c for _, _, c in chunk]})
                  for chunk in (missing[i:i + commit_every] for i in range(0, len(missing), commit_every))]
        self.actors, per_actor, threads = self._pool(ray, len(tables), engine)
        ds = ray.data.from_arrow(tables).map_batches(
            EncodeActor, fn_constructor_kwargs={"source": source, "batch_size": batch_size, "threads": threads,
                                                "engine": engine, "gpu": "num_gpus" in per_actor,
                                                "dtype": self.dtype},
            batch_size=None, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=self.actors), **per_actor)
        from tqdm.auto import tqdm

        bar = tqdm(total=len(missing), desc=f"encoding on Ray ({self.actors} actors)", unit="fn",
                   disable=not show_progress, smoothing=0.1)
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
                store.add_vectors([str(h) for h in batch["hash"]], batch["vector"])
                self.worker_pids.update(int(p) for p in np.unique(batch["pid"]))
                bar.update(len(batch["hash"]))
                if on_batch is not None:
                    on_batch(len(batch["hash"]))
                pause_after_commit(delay)
        except Exception as exc:
            if isinstance(exc, CodeIndexError):
                raise
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
            raise CodeIndexError(f"encoding on Ray failed: {first}") from exc
        finally:
            bar.close()
