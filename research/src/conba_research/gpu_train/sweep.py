"""The GPU sweep's driver (``scripts/gpu_train.sh run``): unpack, view the data once, run every
(variant, seed) of :mod:`variants` a few at a time on the one GPU, evaluate each on the dev sets,
and write the results after every run, so that a deadline or a kill leaves what was gathered.

Results in ``--out``: ``gpu_train.json`` (schema below), ``gpu_train.md`` (the table for people) and
the best ``--export`` checkpoints (:mod:`export`). ``gpu_train.json``::

    {"format": "conba-gpu-train", "version": 1, "status": "running" | "done",
     "plan": {...SweepPlan}, "environment": {"device", "torch", "transformers", "python"},
     "elapsed_seconds": s, "unpacked_token_occurrences": n (tokens whose packed row was zero),
     "shipped": {set: MAP@R of the shipped default (docs/results/default)},
     "runs": [{"name", "variant", "seed", "status": "done" | "failed" | "skipped", "steps", "train_seconds",
               "best_check", "early_stop_map_at_r", "checks", "fingerprint",
               "scores": {set: {"conba", "dense", "seconds", ...}}, "decision": {"beats", ...}, "error"}],
     "variants": {variant: {set: {"mean", "std", "seeds"}}}, "best": [names], "exported": [files]}

The first row, ``untuned``, is the float16 base with mean pooling and no training (the zero-shot
MiniLM through the same evaluation).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from conba.utils.io import write_json_atomic, write_text_atomic
from conba_research.gpu_train import variants as V
from conba_research.gpu_train.dev_eval import SETS, decide, shipped_scores
from conba_research.gpu_train.report import markdown, variant_summary

TRAIN_FILES = ("atcoder_train.jsonl", "mbxp_train.jsonl")


def _view_chunk(args: tuple[list[str], list[str], str]) -> list[str]:
    from conba.syntax.view import apply_views

    return apply_views(*args)[0]


def view_records(records: list, view: str, workers: int) -> list:
    """``records`` with ``view`` applied, in ``workers`` processes."""
    from dataclasses import replace

    if view == "raw" or not records:
        return records
    step = max(1, -(-len(records) // (workers * 4)))
    chunks = [([r.code for r in records[i:i + step]], [r.language for r in records[i:i + step]], view)
              for i in range(0, len(records), step)]
    if workers > 1:
        with get_context("fork").Pool(workers) as pool:
            codes = [c for part in pool.map(_view_chunk, chunks) for c in part]
    else:
        codes = [c for chunk in chunks for c in _view_chunk(chunk)]
    return [replace(r, code=c) for r, c in zip(records, codes)]


def write_records(records: list, path: Path) -> None:
    from dataclasses import asdict

    write_text_atomic(path, "".join(json.dumps(asdict(r)) + "\n" for r in records))


def unpacked_tokens(base: Path, texts: list[str]) -> int:
    """Token occurrences in ``texts`` whose embedding row in the packed base is zero (expected 0)."""
    from transformers import AutoTokenizer

    from conba.utils.saved import read_tensors

    emb = read_tensors(base / "model.safetensors")["embeddings.word_embeddings.weight"]
    zero = (emb == 0).all(dim=1)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    count = 0
    for start in range(0, len(texts), 2000):
        for row in tokenizer(texts[start:start + 2000], truncation=True, max_length=512)["input_ids"]:
            count += sum(1 for i in row if zero[i])
    return count


class Sweep:
    def __init__(self, args: argparse.Namespace, plan: V.SweepPlan, base: Path, data: Path, log,
                 t0: float | None = None) -> None:
        self.args, self.plan, self.base, self.data, self.log = args, plan, base, data, log
        self.work, self.out = Path(args.work), Path(args.out)
        self.t0 = time.monotonic() if t0 is None else t0  # the deadline counts from here
        self.lock = threading.Lock()
        self.rows: list[dict] = []
        self.doc: dict = {"format": "conba-gpu-train", "version": 1, "status": "running", "plan": plan.to_dict(),
                          "environment": {"device": args.device},
                          "shipped": shipped_scores(Path(args.shipped)), "runs": self.rows}

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def write(self) -> None:
        with self.lock:
            self.doc["elapsed_seconds"] = round(self.elapsed(), 1)
            self.doc["variants"] = variant_summary(self.rows)
            write_json_atomic(self.out / "gpu_train.json", self.doc)
            write_text_atomic(self.out / "gpu_train.md", markdown(self.doc))

    def spec(self, name: str, variant: str, seed: int, train: bool) -> dict:
        from conba.model.core import DEFAULT_MODEL_DIR

        lexical = json.loads((Path(DEFAULT_MODEL_DIR) / "conba_config.json").read_text()).get("lexical_weight", 0.0)
        run_dir = self.work / "runs" / name
        spec = {"name": name, "variant": variant, "seed": seed, "out": str(run_dir), "model_dir": str(run_dir),
                "result": str(self.work / "results" / f"{name}.json"), "index_dir": str(self.work / "indexes" / name),
                "eval": {"data": str(self.data), "device": self.args.device, "dtype": "float32",
                         "lexical_weight": lexical, "sets": self.args.sets}}
        if not train:
            from conba.model import ConbaModel

            ConbaModel.create(str(self.base), max_length=self.plan.max_length, view=self.plan.view).save(run_dir)
            return spec
        budget = self.plan.deadline - self.elapsed() - self.plan.eval_seconds - self.plan.start_seconds
        spec["train_config"] = {"train": [str(self.work / f"{Path(n).stem}.viewed.jsonl") for n in TRAIN_FILES],
                                "dev": [str(self.work / "dev_stop.viewed.jsonl")], "out": str(run_dir),
                                "backbone": str(self.base), "device": self.args.device,
                                "cache_dir": str(self.work / "cache"), "time_budget": max(1.0, budget),
                                **V.train_options(self.plan, variant, seed)}
        return spec

    def launch(self, name: str, variant: str, seed: int, train: bool = True) -> dict:
        need = V.estimate_seconds(self.plan, variant) if train else self.plan.eval_seconds
        if self.elapsed() + need > self.plan.deadline:
            row = {"name": name, "variant": variant, "seed": seed, "status": "skipped",
                   "error": f"deadline: {self.elapsed():.0f}s gone, ~{need:.0f}s needed, "
                            f"{self.plan.deadline:.0f}s in all"}
        else:
            self.log(f"[{self.elapsed():5.0f}s] start {name}")
            spec = self.spec(name, variant, seed, train)
            row = self._run(spec)
            row["decision"] = decide(row.get("scores", {}), self.doc["shipped"])
        self.log(f"[{self.elapsed():5.0f}s] {name}: {row['status']} " + json.dumps(
            {k: v.get("conba") for k, v in row.get("scores", {}).items()}))
        with self.lock:
            self.rows.append(row)
        self.write()
        return row

    def _run(self, spec: dict) -> dict:
        from conba_research.gpu_train.run_one import run

        if self.args.in_process:
            return run(spec, log=self.log)
        spec_file = self.work / "specs" / f"{spec['name']}.json"
        spec_file.parent.mkdir(parents=True, exist_ok=True)
        spec_file.write_text(json.dumps(spec, indent=2))
        import conba
        import conba_research

        here = [str(Path(m.__file__).resolve().parents[1]) for m in (conba, conba_research)]  # as imported here
        env = {**os.environ, "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 2) // self.plan.parallel)),
               "PYTHONPATH": os.pathsep.join([*here, os.environ.get("PYTHONPATH", "")])}
        with open(self.work / f"{spec['name']}.log", "w") as log:
            rc = subprocess.call([sys.executable, "-m", "conba_research.gpu_train.run_one", str(spec_file)],
                                 stdout=log, stderr=subprocess.STDOUT, env=env)
        result = Path(spec["result"])
        if result.is_file():
            return json.loads(result.read_text())
        tail = (self.work / f"{spec['name']}.log").read_text(errors="replace")[-400:]
        return {k: spec[k] for k in ("name", "variant", "seed")} | {"status": "failed",
                                                                     "error": f"exit {rc}: {tail}"}

    def run(self) -> dict:
        self.out.mkdir(parents=True, exist_ok=True)
        self.doc["environment"] = _environment(self.args.device)  # after the view's fork pool: CUDA starts here
        self.write()
        todo = [("untuned", "mean", None, False)] + [(n, v, s, True) for n, v, s in V.runs(self.plan)]
        with ThreadPoolExecutor(max_workers=self.plan.parallel) as pool:
            list(pool.map(lambda t: self.launch(*t), todo))
        from conba_research.gpu_train.report import best_runs

        self.doc["best"] = best_runs(self.rows, self.args.export)
        self.doc["exported"] = []
        for name in self.doc["best"]:
            self.doc["exported"] += self.export(name)
        self.doc["status"] = "done"
        self.write()
        return self.doc

    def export(self, name: str) -> list[str]:
        from conba.data import load_records
        from conba_research.gpu_train.export import export_run

        probes = [[r.code, r.language] for r in load_records(self.data / "atcoder_dev.jsonl")[:4]]
        try:
            files = export_run(self.work / "runs" / name, self.base, self.out, name, probes)
        except Exception as exc:  # the results are written whether or not a checkpoint could be
            self.log(f"export {name} failed: {type(exc).__name__}: {exc}")
            return []
        return [f.name for f in files]


def _environment(device: str) -> dict:
    import torch
    import transformers

    env = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
           "device": device}
    if device.startswith("cuda") and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


def prepare_data(sweep: Sweep, workers: int) -> None:
    """The training and early-stopping snippets, viewed once for every run, and the token check."""
    from conba.data import load_records, subset_groups

    t0 = time.time()
    train = []
    for name in TRAIN_FILES:  # one viewed file each: ids are unique within a file (load_records checks)
        records = view_records(load_records(sweep.data / name), sweep.plan.view, workers)
        write_records(records, sweep.work / f"{Path(name).stem}.viewed.jsonl")
        train += records
    dev = subset_groups(load_records(sweep.data / "atcoder_dev.jsonl"), sweep.plan.dev_limit, 0)
    dev = view_records(dev, sweep.plan.view, workers)
    write_records(dev, sweep.work / "dev_stop.viewed.jsonl")
    sweep.doc["unpacked_token_occurrences"] = unpacked_tokens(sweep.base, [r.code for r in train + dev])
    sweep.log(f"[{sweep.elapsed():5.0f}s] {len(train)} training and {len(dev)} early-stopping snippets viewed "
              f"({sweep.plan.view}, {time.time() - t0:.0f}s); tokens outside the pack: "
              f"{sweep.doc['unpacked_token_occurrences']}")


def parse_args(argv: list[str] | None, prog: str | None = None) -> tuple[argparse.Namespace, V.SweepPlan]:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", type=Path, help="The packed folder (scripts/gpu_train.sh prepare) to unpack.")
    ap.add_argument("--base", type=Path, help="Instead of --pack: the untuned backbone's folder ...")
    ap.add_argument("--data", type=Path, help="... and the data folder (the layout of ../shared/data).")
    ap.add_argument("--work", type=Path, required=True, help="Scratch folder: unpacked base, data, runs.")
    ap.add_argument("--out", type=Path, required=True, help="Results: gpu_train.json, gpu_train.md, checkpoints.")
    ap.add_argument("--shipped", type=Path, default=Path("docs/results/default"),
                    help="The shipped default's result JSON per dev set.")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--sets", default=",".join(SETS), help="Dev sets to evaluate (comma list).")
    ap.add_argument("--export", type=int, default=2, help="Best checkpoints to write to --out.")
    ap.add_argument("--in-process", action="store_true", help="Run each run in this process (tests; no parallel).")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Processes for the input view.")
    plan = V.SweepPlan()
    for name, value in plan.to_dict().items():
        kind = type(value)
        if kind is list:
            ap.add_argument(f"--{name.replace('_', '-')}", default=",".join(map(str, value)),
                            help="comma list (default: %(default)s)")
        else:
            ap.add_argument(f"--{name.replace('_', '-')}", type=kind, default=value, help="(default: %(default)s)")
    args = ap.parse_args(argv)
    if not args.pack and not (args.base and args.data):
        ap.error("give --pack, or --base and --data")
    fields = {k: getattr(args, k) for k in plan.to_dict()}
    fields["variants"] = [v for v in args.variants.split(",") if v]
    fields["seeds"] = [int(s) for s in args.seeds.split(",") if s]
    args.sets = [s for s in args.sets.split(",") if s]
    if args.in_process:
        fields["parallel"] = 1
    try:
        return args, V.SweepPlan(**fields).check()
    except ValueError as exc:
        ap.error(str(exc))


def main(argv: list[str] | None = None, prog: str | None = None) -> dict:
    started = time.monotonic()
    args, plan = parse_args(argv, prog)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    args.work.mkdir(parents=True, exist_ok=True)
    if args.pack:
        from conba_research.gpu_train.pack import shipped_reference, unpack

        t0 = time.time()
        base, data = unpack(args.pack, args.work, shipped_reference())
        log(f"unpacked {args.pack} into {args.work} ({time.time() - t0:.0f}s)")
    else:
        base, data = args.base, args.data
    sweep = Sweep(args, plan, base, data, log, started)
    prepare_data(sweep, args.workers)
    return sweep.run()

