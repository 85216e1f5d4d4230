"""Temperature sweep: the contrastive loss temperature τ vs retrieval (MAP@R) and clone detection (ROC).

The reference recipe (ConbaLayer on the pooled vector + language control codes) is trained once per τ
(and per seed of the first ``temperature_seeds`` seeds). ROC curves are drawn on the held-out half of
the balanced clone pairs of each evaluation set (first seed), all temperatures in one panel.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from conba.errors import ConfigError
from conba_research.metrics import aggregate, pair_split, score_embeddings
from conba_research.report import fmt_ms, md_table, pyplot, save_figure, settings_block, write_outputs
from conba_research.runner import REFERENCE, Runner


def run_temperature(runner: Runner, out_dir, temperatures: Sequence[float] | None = None,
                    command: str | None = None) -> dict:
    """Train the reference head at every τ; write temperature.{json,md}, temperature_roc.png, temperature.png."""
    from sklearn.metrics import roc_curve

    cfg, t_start = runner.cfg, time.time()
    temps = [float(t) for t in (temperatures or cfg.temperatures)]
    if any(t <= 0 for t in temps):
        raise ConfigError(f"temperatures must be > 0, got {temps}")
    seeds = cfg.seeds[: cfg.temperature_seeds]
    set_names = [s.name for s in runner.prepared.eval_sets]
    rows: list[dict] = []
    jobs = [(t, s) for t in temps for s in seeds]
    for n, (tau, seed) in enumerate(jobs, 1):
        runner.log(f"[temperature {n}/{len(jobs)}] τ={tau:g} seed {seed}")
        model, run = runner.train(REFERENCE, seed, temperature=tau)
        entry = {"temperature": tau, "seed": seed, "run": run.summary(), "scores": {}, "roc": {}}
        for s in runner.prepared.eval_sets:
            emb = runner.embed(model, s.records)
            entry["scores"][s.name] = score_embeddings(emb, s.records)
            if seed == seeds[0]:
                i, j, labels, calib = pair_split(s.records)
                sc = np.sum(emb[i] * emb[j], axis=1)
                fpr, tpr, _ = roc_curve(labels[~calib], sc[~calib])
                keep = np.unique(np.linspace(0, len(fpr) - 1, min(len(fpr), 200)).astype(int))
                entry["roc"][s.name] = {"fpr": fpr[keep].round(4).tolist(), "tpr": tpr[keep].round(4).tolist()}
        rows.append(entry)
    summary = {}
    for tau in temps:
        mine = [r for r in rows if r["temperature"] == tau]
        summary[f"{tau:g}"] = {s: aggregate([r["scores"][s] for r in mine]) for s in set_names}
        summary[f"{tau:g}"]["train_seconds_mean"] = float(np.mean([r["run"]["seconds"] for r in mine]))
        summary[f"{tau:g}"]["best_epochs"] = [r["run"]["best_epoch"] for r in mine]
    seconds = time.time() - t_start
    data = {"experiment": "temperature", "config": cfg.to_dict(), "data": runner.prepared.describe(),
            "seconds": round(seconds, 1), "seeds": seeds, "summary": summary, "runs": rows}
    figs = [_plot_roc(rows, set_names, seeds[0], out_dir), _plot_trend(summary, temps, set_names, out_dir)]
    headers = ["τ"] + [f"{s} {m}" for s in set_names for m in ("MAP@R", "AUC", "F1")] + ["best epoch", "train s"]
    table = []
    for tau in temps:
        sm = summary[f"{tau:g}"]
        table.append([f"{tau:g}"] + [fmt_ms(sm[s][k]) for s in set_names for k in ("map_at_r", "auc", "f1")]
                     + [", ".join(map(str, sm["best_epochs"])), f"{sm['train_seconds_mean']:.0f}"])
    md = "\n".join([
        "# Temperature sweep", "",
        f"Reference head ({REFERENCE.label}) trained with the supervised contrastive loss at each τ; "
        f"seeds {seeds} (mean ± std when more than one). ROC curves and AUC on the held-out half of the balanced "
        "clone pairs; F1 at the threshold calibrated on the other half.", "",
        md_table(headers, table), "", *[f"![{f}]({f})" for f in figs], "",
        settings_block(cfg, runner.prepared, seconds, command)])
    write_outputs(out_dir, "temperature", data, md)
    return data


def _plot_roc(rows: list[dict], set_names: list[str], seed: int, out_dir) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(set_names), figsize=(5.5 * len(set_names), 5), squeeze=False)
    cmap = plt.get_cmap("plasma")
    firsts = [r for r in rows if r["seed"] == seed]
    for ax, s in zip(axes[0], set_names):
        for k, r in enumerate(firsts):
            roc, auc = r["roc"][s], r["scores"][s]["auc"]
            ax.plot(roc["fpr"], roc["tpr"], color=cmap(k / max(1, len(firsts))), lw=1.6,
                    label=f"τ = {r['temperature']:g} (AUC {auc:.3f})")
        ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=1, label="chance")
        ax.set(title=f"ROC of cosine similarity, {s} (seed {seed})", xlabel="false positive rate",
               ylabel="true positive rate", xlim=(0, 1), ylim=(0, 1.01))
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
    return save_figure(fig, f"{out_dir}/temperature_roc.png")


def _plot_trend(summary: dict, temps: list[float], set_names: list[str], out_dir) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (key, title) in zip(axes, [("map_at_r", "mean cross-language MAP@R"), ("auc", "clone-pair ROC AUC")]):
        for s in set_names:
            m = [summary[f"{t:g}"][s][key]["mean"] for t in temps]
            sd = [summary[f"{t:g}"][s][key]["std"] for t in temps]
            ax.errorbar(temps, m, yerr=sd, marker="o", capsize=3, label=s)
        ax.set_xscale("log")
        ax.set_xticks(temps, [f"{t:g}" for t in temps])
        ax.set(title=f"{title} vs temperature", xlabel="temperature τ (log scale)", ylabel=title)
        ax.grid(alpha=0.3)
        ax.legend(title="eval set", fontsize=8)
    return save_figure(fig, f"{out_dir}/temperature.png")
