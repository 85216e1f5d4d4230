"""``conba bench speed``: encoding throughput of conba variants against sentence-transformers.

Glossary: n timed snippets, d embedding width.

One run: the variants (:mod:`conba.bench.variants`) are built once, warmed up (ONNX exports happen
here, untimed), then timed ``repeats`` times on the same n snippets, alternating (the starting variant
rotates every repeat, so slow drifts in machine load hit every variant alike). Reported per variant:
median snippets/s (wall clock) and its ratio to sentence-transformers, median CPU seconds per snippet
(process time: less sensitive to other jobs than wall time), MAP@R on the MAP@R file (the whole
file, encoded once per variant outside the timed loop and cached), and the cosine of each variant's
vectors to exact conba on the timed snippets; plus the cosine between conba's headless exact path
(mean pooling) and sentence-transformers.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from conba.bench.variants import VARIANTS, Encoder, build_variants, headless_exact
from conba.errors import ConfigError
from conba.utils.cache import ChunkedArrays, cache_key, sequence_key
from conba.utils.versions import package_version

DEFAULT_DATA = "atcoder_dev.jsonl"  # in $CONBA_DATA, when --data is not given


@dataclass
class SpeedConfig:
    data: str = ""  # grouped JSONL; "" = $CONBA_DATA/atcoder_dev.jsonl
    limit: int = 256
    repeats: int = 5
    batch_size: int | None = None  # None: planned for the device (32 on a CPU, 256 on a GPU), every variant
    max_batch_tokens: int = -1  # conba variants' padded-token budget per batch: -1 = the device's plan, 0 = none
    device: str = "auto"  # every variant runs here (conba.engine.device); ONNX variants need the CPU
    dtype: str = "auto"   # ... in this precision (auto: float16 on CUDA), sentence-transformers too
    model: str = "default"
    sdtp: str = ""
    student: str = ""  # the fast variants' student ("" = the shipped default-fast for the default model)
    variants: list[str] = field(default_factory=lambda: list(VARIANTS))
    map_data: str = ""  # "" = the same file as --data
    map_variants: list[str] = field(default_factory=lambda: list(VARIANTS))  # [] = no MAP@R
    map_limit: int = 0  # 0 = every record of the MAP@R file
    cache_dir: str = ""
    seed: int = 0

    def validate(self) -> SpeedConfig:
        if self.limit < 1:
            raise ConfigError(f"limit must be >= 1, got {self.limit}")
        if self.repeats < 1:
            raise ConfigError(f"repeats must be >= 1, got {self.repeats}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.max_batch_tokens < -1:
            raise ConfigError(f"max_batch_tokens must be >= 0 (0 = no budget), got {self.max_batch_tokens}")
        for v in [*self.variants, *self.map_variants]:
            if v not in VARIANTS:
                raise ConfigError(f"unknown variant {v!r} ({', '.join(VARIANTS)})")
        if not self.variants:
            raise ConfigError("no variants to time")
        if not self.data:
            from conba.data.location import data_path

            self.data = str(data_path(DEFAULT_DATA, what="data file (--data)"))
        if not Path(self.data).is_file():
            raise FileNotFoundError(f"{self.data}: data file not found (pass --data FILE)")
        if self.map_data and not Path(self.map_data).is_file():
            raise FileNotFoundError(f"{self.map_data}: MAP@R file not found")
        return self


def sample_records(records: list, limit: int, seed: int) -> list:
    """A seeded random sample of ``limit`` records (all of them when there are fewer)."""
    if limit >= len(records):
        return list(records)
    return random.Random(seed).sample(records, limit)


def group_subset(records: list, limit: int, seed: int) -> list:
    """Whole groups, seeded, until about ``limit`` records (MAP@R needs every clone of a group);
    the same subset as the ``dev_limit`` of ``conba train`` picks."""
    from conba.data import subset_groups

    return list(subset_groups(records, limit, seed))


def time_variants(encoders: dict[str, Encoder], codes: list[str], languages: list[str], repeats: int,
                  log: Callable[[str], None] = lambda m: None) -> tuple[dict[str, dict], dict[str, np.ndarray]]:
    """Alternating timed runs. Returns ({variant: {"wall": [s...], "cpu": [s...]}}, {variant: last vectors})."""
    names = list(encoders)
    for name in names:  # warm-up (ONNX export, lazy inits), untimed
        encoders[name](codes[: min(len(codes), 16)], languages[: min(len(codes), 16)])
    runs: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in names}
    vectors: dict[str, np.ndarray] = {}
    for rep in range(repeats):
        order = names[rep % len(names):] + names[: rep % len(names)]
        for name in order:
            c0, t0 = time.process_time(), time.perf_counter()
            vectors[name] = encoders[name](codes, languages)
            runs[name]["wall"].append(time.perf_counter() - t0)
            runs[name]["cpu"].append(time.process_time() - c0)
        log(f"repeat {rep + 1}/{repeats}: " + ", ".join(
            f"{n} {len(codes) / runs[n]['wall'][-1]:.1f}/s" for n in names))
    return runs, vectors


def _data_key(records: list) -> str:
    return sequence_key(f"{r.id}\0{r.language}\0{r.code}" for r in records)


def variant_key(vs, name: str) -> str:
    """Identity of a variant's embeddings: model + pruner + engine (+ runtime versions for ONNX)."""
    from conba.bench.variants import STUDENT_VARIANTS

    model = vs.student if name in STUDENT_VARIANTS else vs.model
    parts = [name, model.fingerprint()]
    where = getattr(vs, "placement", None)
    if where is not None and (where.device.type, where.dtype_name) != ("cpu", "float32"):
        parts.append(f"{where.device.type}-{where.dtype_name}")  # half-precision vectors are not float32's
    if name in ("sdtp", "both") and model.pruner is not None:
        from conba.encoder.sdtp.scorer import pruner_key

        parts.append(pruner_key(model.pruner))
    if name in ("onnx", "both", "fast-onnx"):
        parts.append(package_version("onnxruntime") or "?")
    if name == "st":
        parts.append(package_version("sentence-transformers") or "?")
    return "-".join(parts)


MAP_CHUNK = 512  # records per cached embedding chunk (a killed MAP@R pass resumes at the next chunk)


def map_at_r(vs, name: str, records: list, cache_dir: Path | None, log: Callable[[str], None]) -> tuple[float, bool]:
    """Mean cross-language MAP@R of a variant on ``records``. Embeddings are cached in chunks of
    ``MAP_CHUNK`` records (so a long pass resumes); returns (MAP@R, True when all came from the cache)."""
    from conba.eval.metrics import records_map_at_r

    cache = ChunkedArrays(cache_dir, f"emb-{cache_key(variant_key(vs, name), _data_key(records), length=20)}",
                          MAP_CHUNK)
    t0 = time.time()

    def encode(start: int, end: int) -> np.ndarray:
        emb = vs.encoders[name]([r.code for r in records[start:end]], [r.language for r in records[start:end]])
        log(f"MAP@R {name}: {end}/{len(records)} snippets encoded ({time.time() - t0:.0f}s)")
        return emb

    emb, cached = cache.rows(len(records), encode)
    return records_map_at_r(emb if len(emb) else np.zeros((0, 1), np.float32), records), cached


def run_speed(cfg: SpeedConfig, log: Callable[[str], None] = lambda m: None) -> dict:
    """Run the benchmark; returns the report dict (see :func:`conba.bench.report.format_report`)."""
    from conba.bench.report import machine_info
    from conba.data import load_records
    from conba.engine.batching import plan_batches
    from conba.engine.device import resolve_placement
    from conba.settings import apply_threads

    cfg.validate()
    placement = resolve_placement(cfg.device, cfg.dtype)
    threads = apply_threads()
    records = load_records(cfg.data)
    sample = sample_records(records, cfg.limit, cfg.seed)
    codes, langs = [r.code for r in sample], [r.language for r in sample]
    wanted = list(dict.fromkeys([*cfg.variants, *cfg.map_variants]))
    vs = build_variants(cfg.model, cfg.sdtp or None, cfg.batch_size, wanted, cfg.max_batch_tokens,
                        cfg.student or None, placement)
    try:
        model = vs.model
        plan = plan_batches(placement.device, cfg.batch_size, "auto" if cfg.max_batch_tokens < 0
                            else (cfg.max_batch_tokens or None))
        report: dict = {"config": asdict(cfg), "machine": machine_info(threads, placement.device),
                        "placement": placement.to_dict(), "batch": {"size": plan.batch_size,
                                                                     "max_tokens": plan.max_tokens},
                        "skipped": dict(vs.skipped),
                        "model": {"name": cfg.model, "fingerprint": model.fingerprint(),
                                  "head": model.head.config.kind, "max_length": model.backbone.max_length},
                        "pruner": None, "timed_snippets": len(sample)}
        if vs.student is not None:
            report["student"] = {"source": vs.student_source, "fingerprint": vs.student.fingerprint(),
                                 "layers": vs.student.backbone.num_layers,
                                 "teacher_layers": vs.student.info.get("teacher_layers")}
        if model.pruner is not None:
            pc = model.pruner.config
            report["pruner"] = {"source": vs.pruner_source, "layers": pc.layers, "keep_ratio": pc.keep_ratio,
                                "keep_first": pc.keep_first, "keep_tail": pc.keep_tail,
                                "token_fraction": round(pc.token_fraction(), 4)}
        timed = {n: e for n, e in vs.encoders.items() if n in cfg.variants}
        lengths = [len(x) for x in model.backbone.tokenizer([model.backbone.preprocess(c) for c in codes],
                                                             truncation=True, max_length=model.backbone.max_length)
                   ["input_ids"]]
        report["timed_tokens_mean"] = round(float(np.mean(lengths)), 1)
        report["load_before"] = _loadavg()
        runs, vecs = time_variants(timed, codes, langs, cfg.repeats, log)
        report["load_after"] = _loadavg()
        rows: dict[str, dict] = {}
        for name in timed:
            wall = runs[name]["wall"]
            rates = [len(codes) / w for w in wall]
            rows[name] = {"snippets_per_s": round(statistics.median(rates), 2),
                          "snippets_per_s_min": round(min(rates), 2), "snippets_per_s_max": round(max(rates), 2),
                          "cpu_ms_per_snippet": round(1000 * statistics.median(runs[name]["cpu"]) / len(codes), 1),
                          "wall_s": [round(w, 3) for w in wall]}
        if "st" in rows:
            for name in rows:
                rows[name]["ratio_to_st"] = round(rows[name]["snippets_per_s"] / rows["st"]["snippets_per_s"], 3)
        if "exact" in rows:
            for name in rows:
                rows[name]["ratio_to_exact"] = round(rows[name]["snippets_per_s"] / rows["exact"]["snippets_per_s"], 3)
        if "exact" in vecs:
            for name in vecs:
                if name != "st":
                    cos = np.sum(vecs[name] * vecs["exact"], axis=1)
                    rows[name]["cos_to_exact_mean"] = round(float(cos.mean()), 6)
                    rows[name]["cos_to_exact_min"] = round(float(cos.min()), 6)
        if "st" in vecs:
            bare = headless_exact(model)(codes, langs)
            cos = np.sum(bare * vecs["st"], axis=1)
            report["cos_headless_exact_vs_st"] = {"mean": round(float(cos.mean()), 7),
                                                  "min": round(float(cos.min()), 7),
                                                  "pass_0.9999": bool(cos.min() >= 0.9999)}
        report["variants"] = rows
        _add_map(report, cfg, vs, log)
        return report
    finally:
        for c in vs.cleanup:
            c.cleanup()


def _add_map(report: dict, cfg: SpeedConfig, vs, log: Callable[[str], None]) -> None:
    from conba.data import load_records
    from conba.settings import default_cache_dir

    names = [n for n in cfg.map_variants if n in vs.encoders]
    if not names:
        return
    records = group_subset(load_records(cfg.map_data or cfg.data), cfg.map_limit, cfg.seed)
    cache = Path(cfg.cache_dir) if cfg.cache_dir else default_cache_dir() / "bench"
    report["map_data"] = {"file": cfg.map_data or cfg.data, "records": len(records),
                          "groups": len({r.group for r in records})}
    for name in names:
        value, cached = map_at_r(vs, name, records, cache, log)
        row = report["variants"].setdefault(name, {})
        row["map_at_r"] = round(value, 4)
        row["map_cached"] = cached
    base = report["variants"].get("exact", {}).get("map_at_r")
    if base is not None:
        for row in report["variants"].values():
            if "map_at_r" in row:
                row["map_delta_points"] = round(100 * (row["map_at_r"] - base), 2)


def _loadavg() -> list[float] | None:
    try:
        import os

        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None
