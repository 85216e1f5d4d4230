"""``conba experiment all``: the whole suite into one output folder, with an index report.

OUT/ablation, OUT/temperature, OUT/classifiers, OUT/figures and OUT/noise each get their JSON,
markdown and PNGs; OUT/README.md links them with the headline numbers and the wall time of each part;
OUT/suite.json holds the timings. Trained models live in the work folder and are reused, so a killed
suite resumes where it stopped (a half-trained run resumes from its checkpoint).
"""

from __future__ import annotations

import time
from pathlib import Path

from conba.errors import ConfigError
from conba.utils.io import write_json_atomic, write_text_atomic
from conba_research.config import ExperimentConfig
from conba_research.data import group_subset, prepare
from conba_research.report import fmt, fmt_ms, machine, md_table
from conba_research.runner import REFERENCE, Runner

PARTS = ("ablation", "temperature", "classifiers", "figures", "noise")
NOISE_MODULE = "conba_research.noise"


def load_run_noise():
    """``run_noise`` from the noise experiment module, or None when that module does not exist."""
    try:
        from conba_research.noise import run_noise
    except ModuleNotFoundError as exc:
        if exc.name == NOISE_MODULE:
            return None
        raise
    return run_noise


def optional_kwargs(fn, **extra) -> dict:
    """The keyword arguments of ``extra`` that ``fn`` accepts (the noise module's extras may change)."""
    import inspect

    params = inspect.signature(fn).parameters
    return {k: v for k, v in extra.items() if k in params}


def run_noise_part(runner: Runner, model, out_dir, log=print, command: str | None = None) -> dict | None:
    run_noise = load_run_noise()
    if run_noise is None:
        log(f"noise: skipped ({NOISE_MODULE} is not installed in this version of conba)")
        return None
    cfg = runner.cfg
    records = group_subset(runner.prepared.eval_sets[0].records, cfg.noise_limit, cfg.data_seed)
    log(f"noise: {len(records)} records of {runner.prepared.eval_sets[0].name}")
    extra = optional_kwargs(run_noise, command=command, data_name=runner.prepared.eval_sets[0].name,
                            model_name=f"reference head ({REFERENCE.label}, seed {cfg.seeds[0]})")
    return run_noise(model, records, out_dir, seed=cfg.seeds[0], quick=cfg.quick, progress=runner.progress, **extra)


def run_all(cfg: ExperimentConfig, out: str | Path, *, parts=PARTS, progress: bool = True, log=print,
            command: str | None = None) -> dict:
    from conba_research.ablation import run_ablation
    from conba_research.classifiers import run_classifiers
    from conba_research.figures import run_figures
    from conba_research.temperature import run_temperature

    cfg.validate()
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ConfigError(f"unknown part(s) {unknown}; choose from {list(PARTS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    prepared = prepare(cfg, log)
    runner = Runner(cfg, prepared, progress=progress, log=log)
    timings: dict[str, float] = {}
    results: dict[str, dict | None] = {}

    def timed(name, fn):
        if name not in parts:
            return
        t = time.time()
        log(f"=== {name} ===")
        results[name] = fn()
        timings[name] = round(time.time() - t, 1)
        log(f"=== {name} done in {timings[name] / 60:.1f} min ===")

    timed("ablation", lambda: run_ablation(runner, out / "ablation", command=command))
    timed("temperature", lambda: run_temperature(runner, out / "temperature", command=command))
    ref_model = runner.train(REFERENCE, cfg.seeds[0])[0] if {"classifiers", "noise"} & set(parts) else None
    ref_name = f"the reference head ({REFERENCE.label}, seed {cfg.seeds[0]})"
    timed("classifiers", lambda: run_classifiers(runner, ref_model, out / "classifiers", model_name=ref_name,
                                                 command=command))
    timed("figures", lambda: run_figures(runner, out / "figures", command=command))
    timed("noise", lambda: run_noise_part(runner, ref_model, out / "noise", log, command))
    total = round(time.time() - t0, 1)
    runs = _run_counts(results)
    data = {"experiment": "all", "config": cfg.to_dict(), "data": prepared.describe(), "machine": machine(),
            "seconds": total, "timings": timings, "runs": runs,
            "skipped": [p for p in parts if results.get(p) is None]}
    write_json_atomic(out / "suite.json", data)
    write_text_atomic(out / "README.md", _index(results, timings, total, cfg, command, out, runs) + "\n")
    log(f"suite done in {total / 60:.1f} min -> {out}")
    return data


def _run_counts(results: dict) -> dict:
    """How many training runs this command trained and how many it reused from the work folder."""
    seen: dict[str, dict] = {}

    def add(run: dict) -> None:  # a run trained by one part and reused by a later one counts as trained
        if run["run_dir"] not in seen or not run["reused"]:
            seen[run["run_dir"]] = run

    for entry in (results.get("ablation") or {}).get("variants", {}).values():
        for run in entry["runs"]:
            add(run)
    for row in (results.get("temperature") or {}).get("runs", []):
        add(row["run"])
    reused = sum(1 for r in seen.values() if r["reused"])
    return {"trained": len(seen) - reused, "reused": reused,
            "train_seconds": round(sum(r["seconds"] for r in seen.values()), 1)}


def _headline(name: str, r: dict | None) -> str:
    if r is None:
        return "skipped"
    if name == "ablation":
        s = next(iter(next(iter(r["variants"].values()))["aggregate"]))
        best = max(r["variants"].items(), key=lambda kv: kv[1]["aggregate"][s]["map_at_r"]["mean"])
        base = r["variants"].get("no_conba")
        txt = f"best on {s}: `{best[0]}` MAP@R {fmt_ms(best[1]['aggregate'][s]['map_at_r'])}"
        if base:
            txt += f" (untrained backbone {fmt_ms(base['aggregate'][s]['map_at_r'])})"
        return txt
    if name == "temperature":
        s = next(iter(next(iter(r["summary"].values()))))
        best = max(r["summary"].items(), key=lambda kv: kv[1][s]["map_at_r"]["mean"])
        return f"best τ on {s}: {best[0]} (MAP@R {fmt_ms(best[1][s]['map_at_r'])}, AUC {fmt_ms(best[1][s]['auc'])})"
    if name == "classifiers":
        s = next(k for k in next(iter(r["results"].values())) if k != "train_seconds")
        best = max(r["results"].items(), key=lambda kv: kv[1][s]["f1"])
        return f"best F1 on {s}: `{best[0]}` {fmt(best[1][s]['f1'])} (AUC {fmt(best[1][s]['roc_auc'])})"
    if name == "figures":
        return "t-SNE before/after, control_weight, curves"
    return "see report"


def _index(results: dict, timings: dict, total: float, cfg: ExperimentConfig, command: str | None,
           out: Path, runs: dict) -> str:
    rows = []
    for name in PARTS:
        report = out / name / f"{name}.md"
        if name in timings and results.get(name) is not None:
            rows.append([f"[{name}]({name}/{name}.md)", f"{timings[name] / 60:.1f}", _headline(name, results[name])])
        elif report.exists():  # skipped now, but an earlier or separate run left its report here
            rows.append([f"[{name}]({name}/{name}.md)", "–", "not re-run by this command; see its report"])
        elif name in timings:
            rows.append([name, f"{timings[name] / 60:.1f}", "skipped (not available)"])
    m = machine()
    lines = ["# Experiment suite" + (" (quick mode)" if cfg.quick else ""), ""]
    if command:
        lines += ["```bash", command, "```", ""]
    lines += [md_table(["experiment", "minutes", "headline"], rows), "",
              f"Total wall time: {total / 60:.1f} min on {m['cpu_cores']} CPU cores"
              + (f" + {m['cuda']}" if m["cuda"] else " (no GPU)") + f", torch {m['torch']}. "
              f"This command trained {runs['trained']} head(s) and reused {runs['reused']} finished run(s); "
              f"training all {runs['trained'] + runs['reused']} took {runs['train_seconds'] / 60:.1f} min in total "
              "(each run's own time, from its experiment_run.json).",
              "Trained models are kept in the work folder "
              f"(`{cfg.work}`) and reused by later runs with the same settings."]
    return "\n".join(lines)
