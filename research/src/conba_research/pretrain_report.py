"""Collect a pretrain-effect run (scripts/pretrain_effect.sh or its small CPU version) into JSON, PNG and markdown.

    conba experiment pretrain-report RESULTS_DIR [--docs DIR] [--title TEXT] [--note TEXT]

RESULTS_DIR holds ``pretrain.json`` (the summary line of ``conba pretrain``), ``backbone-*/`` (the
pretrained backbone with its history and curves), and for each run NAME (``[TUNE-]original`` /
``[TUNE-]pretrained``) ``model-NAME/`` (``conba train`` output) and ``eval-NAME.json`` (``conba eval
--json``). Writes ``pretrain_effect.json``, ``pretrain_effect.png`` and ``pretrain_effect.md`` into
RESULTS_DIR and, with ``--docs``, copies them and the pretraining loss curves there.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
from pathlib import Path

from conba.utils.io import atomic_write, write_text_atomic


def _tune(model_dir: Path) -> str:
    cfg = json.loads((model_dir / "conba_config.json").read_text())
    return cfg.get("info", {}).get("train_config", {}).get("tune", "?")


def collect(folder: Path) -> dict:
    pre = json.loads((folder / "pretrain.json").read_text().strip().splitlines()[-1])
    backbone_dir = Path(pre["out"]) if Path(pre["out"]).is_absolute() else Path(pre["out"])
    if not backbone_dir.exists():
        backbone_dir = next(folder.glob("backbone-*"))
    pcfg = json.loads((backbone_dir / "pretrain_config.json").read_text())
    history = json.loads((backbone_dir / "pretrain_history.json").read_text())
    res = {"question": "does short continued pretraining on the (unlabelled) training code change atcoder_dev "
                       "MAP@R after identical contrastive training?",
           "pretrain_config": pcfg, "pretrain_result": pre, "pretrain_first": history[0], "pretrain_last": history[-1],
           "runs": {}, "deltas": {}}
    for ev_path in sorted(folder.glob("eval-*.json")):
        name = ev_path.stem[len("eval-"):]
        model_dir = folder / f"model-{name}"
        ev = json.loads(ev_path.read_text())
        tr = json.loads((model_dir / "training" / "result.json").read_text())
        train_cfg = json.loads((model_dir / "training" / "train_config.json").read_text())
        variant = "pretrained" if name.endswith("pretrained") else "original"
        tune = _tune(model_dir)
        res["runs"][name] = {
            "tune": tune, "backbone": variant, "backbone_path": train_cfg["backbone"],
            "early_stopping_map_at_r": tr["dev_map_at_r"], "best_epoch": tr["best_epoch"],
            "eval_records": ev["n_records"], "eval_map_at_r": ev["retrieval"]["conba"]["mean"]["map_at_r"],
            "eval_mrr": ev["retrieval"]["conba"]["mean"]["mrr"],
            "eval_recall_at_1": ev["retrieval"]["conba"]["mean"]["recall_at_1"],
            "pair_f1": ev["classification"]["f1"], "roc_auc": ev["classification"]["roc_auc"],
            "train_config": {k: train_cfg[k] for k in ("train", "dev", "dev_limit", "max_per_group_language",
                                                       "max_length", "head", "control_codes", "tune", "epochs",
                                                       "patience", "groups_per_batch", "per_group", "seed")},
        }
    for run in res["runs"].values():
        if run["backbone"] == "pretrained":
            base = next((r for r in res["runs"].values() if r["backbone"] == "original" and r["tune"] == run["tune"]),
                        None)
            if base:
                res["deltas"][run["tune"]] = {k: run[k] - base[k] for k in
                                              ("eval_map_at_r", "eval_mrr", "pair_f1", "early_stopping_map_at_r")}
    import torch

    res["machine"] = {"gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                      "torch": torch.__version__, "platform": platform.platform()}
    return res


def plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tunes = sorted({r["tune"] for r in res["runs"].values()})
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.38
    for k, variant in enumerate(("original", "pretrained")):
        for j, metric in enumerate(("eval_map_at_r", "pair_f1")):
            vals = [next((r[metric] for r in res["runs"].values() if r["tune"] == t and r["backbone"] == variant),
                         float("nan")) for t in tunes]
            xs = [i + (k - 0.5) * width for i in range(len(tunes))]
            bars = ax[j].bar(xs, vals, width, label=f"{variant} backbone", color=("tab:gray", "tab:purple")[k])
            ax[j].bar_label(bars, fmt="%.3f", fontsize=8)
    cfg = res["pretrain_config"]
    for j, label in enumerate(("mean cross-language MAP@R", "clone-pair F1")):
        ax[j].set_xticks(range(len(tunes)), [f"--tune {t}" for t in tunes])
        ax[j].set_ylabel(label)
        ax[j].set_title(f"{label} on atcoder_dev ({next(iter(res['runs'].values()))['eval_records']} records)")
        ax[j].legend(fontsize=8, loc="lower right")
        ax[j].grid(axis="y", alpha=0.3)
    fig.suptitle(f"Effect of {cfg['steps']} steps of continued {cfg['objective'].upper()} pretraining "
                 f"(batch {cfg['batch_size']}, ≤{cfg['max_length']} tokens) before identical contrastive training")
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=100, bbox_inches="tight", format="png"))
    plt.close(fig)


def markdown(res: dict, title: str, note: str) -> str:
    cfg, pre = res["pretrain_config"], res["pretrain_result"]
    first, last = res["pretrain_first"], res["pretrain_last"]
    loss_keys = [k for k in ("mlm", "gen", "disc", "disc_acc") if k in last]
    rows = ["| run | tune | backbone | early-stopping MAP@R (best epoch) | eval MAP@R | MRR | pair F1 | ROC-AUC |",
            "|---|---|---|---|---|---|---|---|"]
    for name, r in res["runs"].items():
        rows.append(f"| {name} | {r['tune']} | {r['backbone']} | {r['early_stopping_map_at_r']:.4f} "
                    f"({r['best_epoch']}) | **{r['eval_map_at_r']:.4f}** | {r['eval_mrr']:.4f} | {r['pair_f1']:.4f} "
                    f"| {r['roc_auc']:.4f} |")
    deltas = [f"--tune {t}: ΔMAP@R {d['eval_map_at_r']:+.4f}, ΔF1 {d['pair_f1']:+.4f}"
              for t, d in res["deltas"].items()]
    tc = next(iter(res["runs"].values()))["train_config"]
    m = res.get("machine", {})
    return "\n".join([
        f"# {title}", "",
        res["question"][0].upper() + res["question"][1:], "",
        "![effect](pretrain_effect.png)", "",
        *rows, "",
        "Pretrained minus original: " + "; ".join(deltas) + ".", "",
        note, "",
        "## Pretraining", "",
        f"- `conba pretrain` objective **{cfg['objective']}**, {cfg['steps']} steps × batch {cfg['batch_size']}, "
        f"windows of ≤ {cfg['max_length']} tokens from {', '.join(Path(p).name for p in cfg['data'])} "
        f"({pre['windows']} windows), "
        f"lr {cfg['lr']:g} (warm-up {cfg['warmup']:g}, linear decay), mask 15% (80/10/10), dynamic masking, seed "
        f"{cfg['seed']}; {pre['tokens_per_second']:.0f} tokens/s on {pre['device']} "
        f"({pre['seconds_this_run']:.0f}s for the last {pre['steps_this_run']} steps).",
        "- loss (mean of 10 steps) first → last: "
        + ", ".join(f"{k} {first[k]:.3f} → {last[k]:.3f}" for k in loss_keys),
        "", "![pretraining curves](pretrain_curves.png)", "",
        "## Contrastive training and evaluation (identical for both backbones)", "",
        f"- `conba train {' '.join(Path(p).name for p in tc['train'])}` head {tc['head']} + control codes, "
        f"`--tune {', '.join(sorted({r['tune'] for r in res['runs'].values()}))}`, P×K {tc['groups_per_batch']}×"
        f"{tc['per_group']}, ≤ {tc['epochs']} epochs (patience {tc['patience']}), max_length {tc['max_length']}, "
        f"≤ {tc['max_per_group_language'] or 'all'} snippets per (group, language), early stopping on "
        f"~{tc['dev_limit'] or 'all'} atcoder_dev records, seed {tc['seed']}.",
        "- `conba eval ../shared/data/atcoder_dev.jsonl` on "
        f"{next(iter(res['runs'].values()))['eval_records']} records; threshold = the one calibrated during training.",
        f"- machine: {m.get('gpu') or 'CPU only'}, torch {m.get('torch', '?')}.",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--docs", default="")
    ap.add_argument("--title", default="Continued pretraining before contrastive training")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    folder = Path(args.results)
    res = collect(folder)
    write_text_atomic(folder / "pretrain_effect.json", json.dumps(res, indent=2) + "\n")
    plot(res, folder / "pretrain_effect.png")
    write_text_atomic(folder / "pretrain_effect.md", markdown(res, args.title, args.note) + "\n")
    if args.docs:
        docs = Path(args.docs)
        docs.mkdir(parents=True, exist_ok=True)
        for name in ("pretrain_effect.json", "pretrain_effect.png", "pretrain_effect.md"):
            shutil.copy(folder / name, docs / name)
        curves = next(folder.glob("backbone-*/pretrain_curves.png"), None)
        if curves:
            shutil.copy(curves, docs / "pretrain_curves.png")
    print(json.dumps({"runs": res["runs"], "deltas": res["deltas"]}, indent=2))


if __name__ == "__main__":
    main()
