"""Figures: t-SNE of embeddings before / after training, control_weight over epochs, training curves.

"Before" is the frozen backbone, mean-pooled (what the head starts from); "after" is the trained
reference head (ConbaLayer pooled + control codes, first seed). The t-SNE shows the groups of the first
evaluation set with the most languages, coloured by group and marked by language. control_weight and
the curves come from the runs' ``training/history.json`` (the first seed of each trained variant found in
the work folder; the reference and the plain ConbaLayer are trained when missing).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np

from conba_research.report import pyplot, save_figure, settings_block, write_outputs
from conba_research.runner import REFERENCE, Runner

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p", "8", "d", "H"]


def tsne_records(records, n_groups: int):
    """The records of the ``n_groups`` groups with the most languages (then most records)."""
    langs: dict[str, set] = {}
    for r in records:
        langs.setdefault(r.group, set()).add(r.language)
    size = Counter(r.group for r in records)
    chosen = sorted(langs, key=lambda g: (-len(langs[g]), -size[g], g))[:n_groups]
    keep = set(chosen)
    return [r for r in records if r.group in keep], chosen


def plot_tsne(before: np.ndarray, after: np.ndarray, records, groups: list[str], path, seed: int = 0) -> str:
    from sklearn.manifold import TSNE

    plt = pyplot()
    langs = sorted({r.language for r in records})
    cmap = plt.get_cmap("tab20" if len(groups) > 10 else "tab10")
    fig, axes = plt.subplots(1, 2, figsize=(15, 6.5))
    perplexity = float(max(2, min(30, (len(records) - 1) // 4)))
    for ax, emb, title in zip(axes, [before, after], ["before training: frozen backbone, mean-pooled",
                                                      "after training: reference head"]):
        xy = TSNE(2, init="pca", perplexity=perplexity, random_state=seed).fit_transform(emb)
        for gi, g in enumerate(groups):
            for li, lang in enumerate(langs):
                idx = [k for k, r in enumerate(records) if r.group == g and r.language == lang]
                if idx:
                    ax.scatter(xy[idx, 0], xy[idx, 1], s=22, color=cmap(gi % cmap.N), marker=MARKERS[li % len(MARKERS)],
                               alpha=0.8, edgecolors="none")
        ax.set(title=f"t-SNE, {title}", xlabel="t-SNE 1", ylabel="t-SNE 2")
    lang_handles = [plt.Line2D([], [], ls="", marker=MARKERS[i % len(MARKERS)], color="black", label=lang)
                    for i, lang in enumerate(langs)]
    group_handles = [plt.Line2D([], [], ls="", marker="o", color=cmap(i % cmap.N), label=g.split("/", 1)[-1])
                     for i, g in enumerate(groups)]
    fig.suptitle(f"Embeddings of {len(records)} snippets from {len(groups)} groups")
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    fig.legend(handles=lang_handles, title="language (marker)", loc="upper right", fontsize=8)
    fig.legend(handles=group_handles, title="group (colour)", loc="lower right", fontsize=7)
    return save_figure(fig, path)


def plot_control_weight(histories: dict[str, dict], path) -> str:
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    names = [n for n, h in histories.items() if any(e.get("control_weight_sample") for e in h["epochs"])]
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(6.5 * max(1, len(names)), 4.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        eps = [e for e in histories[name]["epochs"] if e.get("control_weight_sample")]
        x = [e["epoch"] for e in eps]
        sample = np.array([e["control_weight_sample"] for e in eps])
        colours = plt.get_cmap("tab20")
        for d in range(sample.shape[1]):
            ax.plot(x, sample[:, d], lw=1, alpha=0.85, color=colours(d % 20), label=f"dim {d}")
        ax.plot(x, [e["control_weight_mean"] for e in eps], color="black", lw=2.5, label="mean (all dims)")
        ax.set(title=f"control_weight over epochs: {name}", xlabel="epoch (0 = initial)", ylabel="value")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="best")
    if not names:
        axes[0][0].text(0.5, 0.5, "no run with a control_weight", ha="center", va="center")
    return save_figure(fig, path)


def plot_curves(histories: dict[str, dict], path) -> str:
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    for name, h in histories.items():
        tl = [(e["epoch"], e["train_loss"]) for e in h["epochs"] if e.get("train_loss") is not None]
        dv = [(e["epoch"], e["dev_map_at_r"]) for e in h["epochs"] if e.get("dev_map_at_r") is not None]
        if tl:
            axes[0].plot(*zip(*tl), marker="o", ms=3, label=name)
        if dv:
            axes[1].plot(*zip(*dv), marker="o", ms=3, label=name)
    axes[1].text(0.01, 0.01, "lines that coincide hide each other (e.g. conba / no_control)",
                 transform=axes[1].transAxes, fontsize=7, color="grey")
    axes[0].set(title="training loss (mean per epoch)", xlabel="epoch", ylabel="supervised contrastive loss")
    axes[1].set(title="validation: early-stopping set", xlabel="epoch (0 = before training)",
                ylabel="mean cross-language MAP@R")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(title="variant (first seed)", fontsize=8)
    return save_figure(fig, path)


def run_figures(runner: Runner, out_dir, command: str | None = None, variants=None) -> dict:
    """Write tsne.png, control_weight.png, curves.png and figures.{json,md}."""
    from conba_research.ablation import VARIANTS

    cfg, t_start = runner.cfg, time.time()
    seed = cfg.seeds[0]
    out_dir = Path(out_dir)
    ref_model, _ = runner.train(REFERENCE, seed)
    histories: dict[str, dict] = {}
    for v in variants or VARIANTS:
        if not v.trained:
            continue
        done = (runner.run_dir(v, seed) / "experiment_run.json").exists()
        if done or v.name in ("conba", REFERENCE.name):
            histories[v.name] = {"epochs": runner.train(v, seed)[1].history["epochs"]}
    eval_set = runner.prepared.eval_sets[0]
    recs, groups = tsne_records(eval_set.records, cfg.tsne_groups)
    before = runner.embed(runner.untrained(VARIANTS[0]), recs)
    after = runner.embed(ref_model, recs)
    figs = [plot_tsne(before, after, recs, groups, out_dir / "tsne.png", seed),
            plot_control_weight({k: histories[k] for k in ("conba", REFERENCE.name) if k in histories},
                                out_dir / "control_weight.png"),
            plot_curves(histories, out_dir / "curves.png")]
    seconds = time.time() - t_start
    data = {"experiment": "figures", "config": cfg.to_dict(), "seconds": round(seconds, 1),
            "tsne": {"eval_set": eval_set.name, "groups": groups, "records": len(recs)},
            "histories": histories}
    md = "\n".join([
        "# Figures", "",
        f"- `tsne.png`: t-SNE of {len(recs)} `{eval_set.name}` snippets ({len(groups)} groups with the most "
        "languages), coloured by group, marked by language; left the frozen backbone (mean-pooled), right the "
        f"trained reference head ({REFERENCE.label}, seed {seed}).",
        "- `control_weight.png`: the effective control_weight (first 12 of its dimensions, and the mean over all) "
        "after each epoch, for the plain ConbaLayer and the reference (with control codes: the shared code's weight).",
        "- `curves.png`: mean training loss per epoch and MAP@R on the early-stopping set, per variant (first seed).",
        "", *[f"![{f}]({f})" for f in figs], "", settings_block(cfg, runner.prepared, seconds, command)])
    write_outputs(out_dir, "figures", data, md)
    return data
