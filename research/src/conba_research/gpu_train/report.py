"""The GPU sweep's summary: per-variant mean ± std over seeds, the best runs by the decision rule, and
the markdown table of ``gpu_train.md``."""

from __future__ import annotations

import statistics

from conba_research.gpu_train.dev_eval import SETS


def variant_summary(rows: list[dict], key: str = "conba") -> dict:
    """``{variant: {set: {"mean", "std", "seeds"}}}`` over the finished runs (the untuned row apart)."""
    out: dict[str, dict] = {}
    for row in rows:
        if row.get("status") != "done" or row.get("name") == "untuned":
            continue
        for name, score in row.get("scores", {}).items():
            if score.get(key) is not None:
                out.setdefault(row["variant"], {}).setdefault(name, []).append(score[key])
    return {v: {s: {"mean": round(statistics.fmean(xs), 6), "std": round(statistics.pstdev(xs), 6), "seeds": len(xs)}
                for s, xs in sets.items()} for v, sets in out.items()}


def best_runs(rows: list[dict], n: int) -> list[str]:
    """The ``n`` trained runs with the largest mean difference to the shipped default over the sets they
    were scored on, best first."""
    scored = [r for r in rows if r.get("status") == "done" and r.get("name") != "untuned"
              and r.get("decision", {}).get("mean_difference") is not None]
    scored.sort(key=lambda r: -r["decision"]["mean_difference"])
    return [r["name"] for r in scored[:n]]


def _cell(value) -> str:
    return "–" if value is None else f"{value:.3f}"


def markdown(doc: dict) -> str:
    """The runs as a table (``conba`` MAP@R per set, the rule's verdict), then the per-variant means."""
    sets = list(SETS)
    shipped = doc.get("shipped", {})
    lines = [f"# GPU sweep ({doc.get('status')}, {doc.get('elapsed_seconds', 0):.0f} s, "
             f"{doc.get('environment', {}).get('gpu', doc.get('environment', {}).get('device'))})", "",
             "MAP@R of the fused `conba` score (dense in brackets) on each dev set; `beats` = the rule of "
             "docs/gpu-train.md against the shipped default.", "",
             "| run | status | steps | best check | " + " | ".join(sets) + " | mean Δ | beats |",
             "|---" * (6 + len(sets)) + "|",
             "| shipped default | – | – | – | " + " | ".join(_cell(shipped.get(s)) for s in sets) + " | – | – |"]
    for row in doc.get("runs", []):
        scores = row.get("scores", {})
        cells = [f"{_cell(scores.get(s, {}).get('conba'))} ({_cell(scores.get(s, {}).get('dense'))})" for s in sets]
        dec = row.get("decision", {})
        lines.append(f"| {row.get('name')} | {row.get('status')} | {row.get('steps', '–')} | "
                     f"{row.get('best_check', '–')} | " + " | ".join(cells)
                     + f" | {_cell(dec.get('mean_difference'))} | {dec.get('beats', '–')} |")
    lines += ["", "| variant | " + " | ".join(sets) + " |", "|---" * (1 + len(sets)) + "|"]
    for variant, by_set in doc.get("variants", {}).items():
        lines.append(f"| {variant} | " + " | ".join(
            f"{by_set[s]['mean']:.3f} ± {by_set[s]['std']:.3f} ({by_set[s]['seeds']})" if s in by_set else "–"
            for s in sets) + " |")
    failed = [r for r in doc.get("runs", []) if r.get("error")]
    if failed:
        lines += [""] + [f"* {r['name']}: {r['error'][:300]}" for r in failed]
    if doc.get("exported"):
        lines += ["", "Checkpoints: " + ", ".join(doc["exported"])]
    return "\n".join(lines) + "\n"
