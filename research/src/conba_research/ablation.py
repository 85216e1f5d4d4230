"""Ablation: which parts of the ConbaLayer matter, on the same data and the same seeds.

Variants: no_conba (the frozen backbone, mean-pooled, untrained), linear (a trained linear head, no
ConbaLayer), conba (full ConbaLayer on the pooled vector), conba_codes (+ language control codes: the
shipped model's recipe), no_control (without control_weight), no_feedback (without feedback_weight: the
state is kept and added unweighted), no_state_path (without the state path: B, and A over tokens, and
feedback_weight; called no_feedback before), tokens (ConbaLayer as a recurrence over the token
states), scan (conba-scan, the S6 selective SSM with the ConbaLayer gate) and conba_short (the pooled
ConbaLayer trained with the over-tokens heads' small budget, so tokens / scan can be compared with it at
equal steps). Each trained variant runs with every seed; the report gives mean ± std of MAP@R (per
language pair too), F1 and AUC.

``no_state`` (``conba train --no-state``: B removed, feedback term 0) is not a separate variant: with no
state there is nothing for feedback_weight to weigh, so it builds the same head as ``no_state_path``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from conba_research.metrics import aggregate
from conba_research.report import fmt, fmt_ms, md_table, pyplot, save_figure, settings_block, write_outputs
from conba_research.runner import REFERENCE, Runner, Variant, select_named

VARIANTS: tuple[Variant, ...] = (
    Variant("no_conba", "no ConbaLayer: frozen backbone, mean-pooled (untrained)", head="none", trained=False),
    Variant("linear", "linear head on the pooled vector (no ConbaLayer)", head="linear"),
    Variant("conba", "ConbaLayer, pooled (full)"),
    REFERENCE,
    Variant("no_control", "ConbaLayer, pooled, without control_weight", use_control=False),
    Variant("no_feedback", "ConbaLayer, pooled, without feedback_weight (state kept, added unweighted)",
            use_feedback=False),
    Variant("no_state_path", "ConbaLayer, pooled, without the state path (B, feedback_weight)",
            use_feedback=False, use_state=False),
    Variant("tokens", "ConbaLayer over tokens (recurrence)", head_mode="tokens"),
    Variant("scan", "conba-scan (S6 selective scan) over tokens", head="conba-scan"),
    Variant("conba_short", "ConbaLayer, pooled, trained with the over-tokens budget (a control for "
            "`tokens` / `scan`)", short=True),
)


def select_variants(names: Sequence[str] | None) -> list[Variant]:
    return select_named(VARIANTS, names, "variant")


def run_ablation(runner: Runner, out_dir, variants: Sequence[str] | None = None, command: str | None = None) -> dict:
    """Train/evaluate every variant with every seed; write ablation.{json,md}, ablation.png, ablation_pairs.png."""
    cfg, t_start = runner.cfg, time.time()
    chosen = select_variants(variants)
    jobs = [(v, s) for v in chosen for s in (cfg.seeds if v.trained else cfg.seeds[:1])]
    results: dict = {}
    for n, (v, seed) in enumerate(jobs, 1):
        runner.log(f"[ablation {n}/{len(jobs)}] {v.name} seed {seed}")
        entry = results.setdefault(v.name, {"label": v.label, "trained": v.trained, "token_head": v.token_head,
                                            "runs": [], "per_seed": []})
        if v.trained:
            model, run = runner.train(v, seed)
            entry["runs"].append(run.summary())
        else:
            model = runner.untrained(v)
        entry["per_seed"].append({"seed": seed, **runner.evaluate(model)})
    set_names = [s.name for s in runner.prepared.eval_sets]
    for entry in results.values():
        entry["aggregate"] = {s: aggregate([p[s] for p in entry["per_seed"]]) for s in set_names}
        secs = [r["seconds"] for r in entry["runs"]]
        entry["train_seconds_mean"] = float(np.mean(secs)) if secs else 0.0
    seconds = time.time() - t_start
    data = {"experiment": "ablation", "config": cfg.to_dict(), "data": runner.prepared.describe(),
            "seconds": round(seconds, 1), "variants": results}
    figs = [_plot_bars(results, set_names, out_dir), _plot_pairs(results, set_names, out_dir)]
    write_outputs(out_dir, "ablation", data, _markdown(results, set_names, cfg, runner, seconds, command, figs))
    return data


def _markdown(results: dict, set_names: list[str], cfg, runner: Runner, seconds: float, command, figs) -> str:
    headers = ["variant", "seeds"]
    for s in set_names:
        headers += [f"{s} MAP@R", f"{s} F1", f"{s} AUC"]
    headers.append("train s/run")
    rows = []
    for name, e in results.items():
        row = [f"`{name}`", str(len(e["per_seed"])) if e["trained"] else "– (untrained)"]
        for s in set_names:
            a = e["aggregate"][s]
            row += [fmt_ms(a["map_at_r"]), fmt_ms(a["f1"]), fmt_ms(a["auc"])]
        row.append(f"{e['train_seconds_mean']:.0f}" if e["trained"] else "0")
        rows.append(row)
    lines = ["# Ablation: ConbaLayer components", "",
             f"Mean ± std over seeds {cfg.seeds} (sample std; untrained variants are deterministic). "
             "MAP@R is the mean over ordered cross-language pairs; F1 (threshold calibrated on half of the "
             "balanced clone pairs, split by anchor group) and ROC AUC are measured on the other half.", "",
             md_table(headers, rows), "",
             "Variants: " + "; ".join(f"`{n}` = {e['label']}" for n, e in results.items()) + ".", "",
             *[f"![{f}]({f})" for f in figs], ""]
    for s in set_names:
        pairs = sorted({p for e in results.values() for p in e["aggregate"][s]["pairs"]})
        prow = [[p] + [fmt(e["aggregate"][s]["pairs"][p]["mean"]) for e in results.values()] for p in pairs]
        lines += [f"<details><summary>MAP@R per language pair on {s} (mean over seeds; std in ablation.json)"
                  "</summary>", "", md_table(["query->candidate", *[f"`{n}`" for n in results]], prow), "",
                  "</details>", ""]
    lines.append(settings_block(cfg, runner.prepared, seconds, command))
    return "\n".join(lines)


def _plot_bars(results: dict, set_names: list[str], out_dir) -> str:
    plt = pyplot()
    names = list(results)
    metrics = [("map_at_r", "mean cross-language MAP@R"), ("f1", "clone-pair F1"), ("auc", "clone-pair ROC AUC")]
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.45 * len(names) * len(set_names) + 2.5), sharey=True)
    height = 0.8 / len(set_names)
    y = np.arange(len(names))
    for ax, (key, title) in zip(axes, metrics):
        for k, s in enumerate(set_names):
            means = [results[n]["aggregate"][s][key]["mean"] for n in names]
            stds = [results[n]["aggregate"][s][key]["std"] for n in names]
            ax.barh(y + k * height, means, height, xerr=stds, capsize=3, label=s)
        ax.set(title=title, xlabel=title.replace("mean cross-language ", ""), xlim=(0, 1.0))
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y + height * (len(set_names) - 1) / 2, names)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, title="eval set", loc="lower center", ncol=len(set_names), bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("Ablation (bars: mean over seeds, whiskers: ± std)")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return save_figure(fig, f"{out_dir}/ablation.png")


def _plot_pairs(results: dict, set_names: list[str], out_dir) -> str:
    plt = pyplot()
    names = list(results)
    widths = [len(results[names[0]]["aggregate"][s]["pairs"]) for s in set_names]
    fig, axes = plt.subplots(len(set_names), 1, figsize=(max(9, 0.3 * max(widths) + 3), 4.4 * len(set_names)),
                             squeeze=False, layout="constrained")
    for ax, s, width in zip(axes[:, 0], set_names, widths):
        pairs = sorted(results[names[0]]["aggregate"][s]["pairs"])
        grid = np.array([[results[n]["aggregate"][s]["pairs"][p]["mean"] for p in pairs] for n in names])
        im = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0, vmax=max(1e-6, float(np.nanmax(grid))))
        if width <= 30:  # small grids: print the values
            for r in range(grid.shape[0]):
                for c in range(grid.shape[1]):
                    ax.text(c, r, f"{grid[r, c]:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if grid[r, c] < 0.6 * np.nanmax(grid) else "black")
        ax.set_yticks(range(len(names)), names)
        ax.set_xticks(range(len(pairs)), pairs, rotation=90, fontsize=7)
        ax.set(title=f"MAP@R per language pair (query->candidate), {s}, mean over seeds",
               xlabel="language pair")
        fig.colorbar(im, ax=ax, label="MAP@R", fraction=0.03)
    return save_figure(fig, f"{out_dir}/ablation_pairs.png")
