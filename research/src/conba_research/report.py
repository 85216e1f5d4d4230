"""Writing experiment outputs: JSON with every number, PNG figures, short markdown reports.

Every experiment writes ``<name>.json``, ``<name>.md`` and its PNGs into its output folder, each file
atomically. Numbers in markdown are formatted here, so all reports look alike.
"""

from __future__ import annotations

import math
import platform
import sys
from pathlib import Path
from typing import Any

from conba.utils.io import atomic_write, write_json_atomic, write_text_atomic


def fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def fmt_ms(stat: dict, digits: int = 3) -> str:
    """``mean ± std`` of an ``aggregate`` entry (just the value when it comes from one run)."""
    m, s = stat.get("mean"), stat.get("std")
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return "–"
    if len(stat.get("values", [None, None])) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {s:.{digits}f}"


def rounded(obj: Any, digits: int = 5) -> Any:
    """``obj`` with every float rounded to ``digits`` decimals (keeps the JSON outputs small)."""
    if isinstance(obj, float):
        return obj if math.isnan(obj) or math.isinf(obj) else round(obj, digits)
    if isinstance(obj, dict):
        return {k: rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v, digits) for v in obj]
    return obj


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(out)


def machine() -> dict:
    import os

    import torch

    return {"python": sys.version.split()[0], "torch": torch.__version__, "platform": platform.platform(),
            "cpu_cores": os.cpu_count(), "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def save_figure(fig, path: str | Path, dpi: int = 100) -> str:
    """Save a matplotlib figure as PNG atomically and close it."""
    import matplotlib.pyplot as plt

    path = Path(path)
    atomic_write(path, lambda p: fig.savefig(p, dpi=dpi, format="png", bbox_inches="tight"))
    plt.close(fig)
    return path.name


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_outputs(out_dir: str | Path, name: str, data: dict, markdown: str) -> None:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / f"{name}.json", rounded(data))
    write_text_atomic(out_dir / f"{name}.md", markdown.rstrip() + "\n")


def settings_block(cfg, prepared, seconds: float, command: str | None = None) -> str:
    """The markdown section that says what was run, on what data and machine, and how long it took."""
    d = prepared.describe()
    lines = ["## Setup", ""]
    if command:
        lines += ["```bash", command, "```", ""]
    tr = d["train"]
    lines.append(f"- training data: {tr['records']} snippets, {tr['groups']} groups "
                 f"({', '.join(Path(p).name for p in cfg.train)}; at most {cfg.cap or 'all'} per (group, language)"
                 + (f", then ~{cfg.train_limit} snippets of whole groups" if cfg.train_limit else "") + ")")
    for name, e in d["eval"].items():
        tag = " (also the early-stopping set)" if name == prepared.select.name else ""
        lines.append(f"- eval `{name}`{tag}: {e['records']} records, {e['groups']} groups, "
                     f"{len(e['languages'])} languages (whole groups, ≤ ~{cfg.dev_limit or 'all'} records, seed "
                     f"{cfg.data_seed})")
    lines.append(f"- backbone `{cfg.backbone}` frozen (`--tune none`), max_length {cfg.max_length}; "
                 f"P×K = {cfg.groups_per_batch}×{cfg.per_group}, ≤ {cfg.epochs} epochs (patience {cfg.patience}), "
                 f"τ = {cfg.temperature:g} unless swept")
    lines.append(f"- over-tokens heads: first {cfg.head_tokens or 'all'} token states, "
                 f"{cfg.token_steps or 'all'} batches of {cfg.token_groups_per_batch}×{cfg.per_group} per epoch, "
                 f"≤ {cfg.token_epochs} epochs")
    m = machine()
    lines.append(f"- machine: {m['cpu_cores']} CPU cores, {'GPU ' + m['cuda'] if m['cuda'] else 'no GPU'}, "
                 f"torch {m['torch']}; wall time {seconds / 60:.1f} min" + (" (quick mode)" if cfg.quick else ""))
    return "\n".join(lines)
