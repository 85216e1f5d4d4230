"""``conba bench gpu``: the GPU benchmark of issue 36 in one run, offline, that also runs on a CPU.

Stages (each timed, each result in ``gpu_bench.json`` and one table in ``gpu_bench.md``):

1. ``conba bench speed`` (:func:`conba.bench.speed.run_speed`) on the device, conba (``exact``)
   against sentence-transformers (``st``) on the same weights, cap, precision and batch size (the
   device's plan: 256 on a GPU), once per ``--dtypes`` entry (float32 and float16 by default);
2. ``conba index --device D`` end to end (a subprocess: model load, walking, parsing, encoding,
   writing) of a tree of at least ``--functions`` Python functions (:mod:`conba_research.bench.gpu_tree`);
3. the same ``conba index`` on the CPU over the first ``--cpu-functions`` of them, for the
   functions/s ratio of the device to this machine's CPU (skipped when the device is the CPU).

The model: ``-m`` (default ``zero-shot``, the untuned MiniLM the issue measured); when it cannot load
(the embedded MiniLM package is not installed, as on a bare GPU machine), a stand-in of the same
shape with random weights (:func:`conba_research.bench.gpu_tree.stand_in_model`): same speed, no meaningful
vectors. The report says which one ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conba.errors import ConbaError, ConfigError

DEFAULT_TOKENIZER = ".gpu-bench/minilm-tokenizer"  # where scripts/gpu_bench.sh prepare copies it


@dataclass
class GpuBenchConfig:
    out: str
    device: str = "auto"
    model: str = "zero-shot"
    dtypes: list[str] = field(default_factory=lambda: ["float32", "float16"])
    snippets: int = 4000
    repeats: int = 3
    functions: int = 22_000  # Python defs (ast); conba index keeps ~90% of them: >= 20k functions
    cpu_functions: int = 2_000
    source: list[str] = field(default_factory=list)  # folders of Python code (default: site-packages)
    tokenizer: str = DEFAULT_TOKENIZER  # the stand-in's tokenizer, when -m cannot load
    batch_size: int | None = None  # None: the device's plan
    seed: int = 0

    def validate(self) -> GpuBenchConfig:
        for name in ("snippets", "repeats", "functions"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.cpu_functions < 0:
            raise ConfigError(f"cpu_functions must be >= 0, got {self.cpu_functions}")
        if not self.dtypes:
            raise ConfigError("no --dtypes to time")
        return self


def resolve_bench_model(cfg: GpuBenchConfig, out: Path, log: Callable[[str], None]) -> tuple[str, str]:
    """(model name or folder, what it is): ``cfg.model`` when it loads, else the MiniLM-shaped stand-in."""
    from conba.model import load_model
    from conba_research.bench.gpu_tree import stand_in_model

    try:
        load_model(cfg.model)
        return cfg.model, f"{cfg.model}"
    except (ConbaError, ImportError, OSError) as exc:
        log(f"model {cfg.model!r} cannot load here ({str(exc).splitlines()[0][:200]}); using a MiniLM-shaped "
            f"stand-in with random weights (same shape and speed)")
    folder = out / "stand-in-minilm"
    if not (folder / "config.json").is_file():
        stand_in_model(Path(cfg.tokenizer), folder, seed=cfg.seed)
    return str(folder), "stand-in: all-MiniLM-L6-v2's shape and tokenizer, random weights"


def speed_stage(cfg: GpuBenchConfig, model: str, data: Path, log: Callable[[str], None]) -> dict:
    """``conba bench speed -V st,exact --map-variants none`` once per dtype; {dtype: report}."""
    from conba.bench.speed import SpeedConfig, run_speed

    out = {}
    for dtype in cfg.dtypes:
        log(f"bench speed: {cfg.snippets} snippets on {cfg.device} in {dtype}")
        t0 = time.perf_counter()
        out[dtype] = run_speed(SpeedConfig(data=str(data), limit=cfg.snippets, repeats=cfg.repeats,
                                           batch_size=cfg.batch_size, model=model, variants=["st", "exact"],
                                           map_variants=[], seed=cfg.seed, device=cfg.device, dtype=dtype), log=log)
        out[dtype]["stage_s"] = round(time.perf_counter() - t0, 1)
    return out


def index_run(tree: Path, index: Path, model: str, device: str, batch_size: int | None,
              log: Callable[[str], None]) -> dict:
    """``conba index TREE -i INDEX -m MODEL --device D --rebuild --json`` in a subprocess: its report and
    wall-clock seconds (model load and start-up included)."""
    cmd = [sys.executable, "-m", "conba.cli.main", "index", str(tree), "-i", str(index), "-m", model,
           "--device", device, "--rebuild", "--json", "--no-progress"]
    if batch_size:
        cmd += ["-b", str(batch_size)]
    log("$ conba " + " ".join(cmd[3:]))
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise ConfigError(f"conba index --device {device} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    units = int(report.get("units_encoded") or report.get("units_total") or 0)
    inside = float(report.get("seconds") or 0)  # the index's own time, without start-up and model load
    return {"device": device, "wall_s": round(wall, 2), "index_s": round(inside, 2), "report": report,
            "functions": units, "functions_per_s": round(units / wall, 1) if wall > 0 else None,
            "functions_per_index_s": round(units / inside, 1) if inside > 0 else None}


def index_stage(cfg: GpuBenchConfig, model: str, out: Path, log: Callable[[str], None]) -> dict:
    from conba.engine.device import as_device
    from conba_research.bench.gpu_tree import build_tree

    roots = [Path(s) for s in cfg.source] or None
    tree = build_tree(out / "tree", cfg.functions, roots)  # built already (run_gpu_bench): reused
    log(f"tree: {tree['functions']} Python functions in {tree['files']} files")
    result = {"tree": tree, "device_run": index_run(out / "tree", out / "index-device", model, cfg.device,
                                                    cfg.batch_size, log)}
    if cfg.cpu_functions and as_device(cfg.device).type != "cpu":
        small = build_tree(out / "tree-cpu", cfg.cpu_functions, roots)
        log(f"CPU baseline tree: {small['functions']} functions")
        result["cpu_run"] = index_run(out / "tree-cpu", out / "index-cpu", model, "cpu", None, log)
        for key, name in (("functions_per_s", "speedup_vs_cpu"),  # wall clock
                          ("functions_per_index_s", "speedup_vs_cpu_index_s")):  # the index's own seconds
            rate, base = result["device_run"][key], result["cpu_run"][key]
            result[name] = round(rate / base, 2) if rate and base else None
    return result


def run_gpu_bench(cfg: GpuBenchConfig, log: Callable[[str], None] = lambda m: None) -> dict:
    """Run every stage; writes ``OUT/gpu_bench.json`` and ``OUT/gpu_bench.md``; returns the report."""
    import torch

    from conba.engine.device import as_device
    from conba.utils.io import write_json_atomic, write_text_atomic
    from conba_research.bench.gpu_report import format_gpu_report
    from conba_research.bench.gpu_tree import build_tree, tree_snippets, write_snippets

    cfg.validate()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    device = as_device(cfg.device)  # a missing GPU fails here, in one line
    t0 = time.perf_counter()
    model, what = resolve_bench_model(cfg, out, log)
    report: dict = {"command": " ".join(["conba", *sys.argv[1:]]), "config": asdict(cfg),
                    "device": str(device), "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
                    "torch": torch.__version__, "model": model, "model_kind": what}
    roots = [Path(s) for s in cfg.source] or None
    build_tree(out / "tree", cfg.functions, roots)  # the index stage's tree; the snippets come from it
    data = write_snippets(out / "snippets.jsonl", tree_snippets(out / "tree", cfg.snippets))
    report["speed"] = speed_stage(cfg, model, data, log)
    report["index"] = index_stage(cfg, model, out, log)
    report["total_s"] = round(time.perf_counter() - t0, 1)
    write_json_atomic(out / "gpu_bench.json", report)
    text = format_gpu_report(report)
    write_text_atomic(out / "gpu_bench.md", text)
    return report
