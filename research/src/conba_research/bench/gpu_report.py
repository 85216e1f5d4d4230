"""The markdown tables of ``conba bench gpu`` (:mod:`conba_research.bench.gpu`)."""

from __future__ import annotations


def _num(value, spec: str = ",.0f") -> str:
    return "—" if value is None else format(value, spec)


def format_gpu_report(report: dict) -> str:
    """Header lines, the encoder table (conba vs sentence-transformers per precision) and the index table."""
    cfg = report["config"]
    where = report.get("gpu") or report["device"]
    lines = [f"# conba bench gpu — {where}, torch {report['torch']}", "",
             f"Command: `{report['command']}`", "",
             f"Model: {report['model_kind']} (`{report['model']}`); total {report['total_s']} s.", "",
             "## Encoder: conba vs sentence-transformers (same weights, cap, precision and batch)", "",
             "| precision | batch | snippets | sentence-transformers snippets/s | conba snippets/s | × ST | "
             "cos conba–ST (min) |",
             "|---|---|---|---|---|---|---|"]
    for dtype, run in report["speed"].items():
        rows = run["variants"]
        st, conba = rows.get("st", {}), rows.get("exact", {})
        cos = (run.get("cos_headless_exact_vs_st") or {}).get("min")
        lines.append(f"| {dtype} | {run.get('batch', {}).get('size')} | {run['timed_snippets']} | "
                     f"{_num(st.get('snippets_per_s'))} | {_num(conba.get('snippets_per_s'))} | "
                     f"{_num(conba.get('ratio_to_st'), '.2f')} | {_num(cos, '.6f')} |")
        for name, why in run.get("skipped", {}).items():
            lines.append(f"|  | skipped {name}: {why} | | | | | |")
    idx = report["index"]
    tree = idx["tree"]
    lines += ["", f"## `conba index` end to end ({tree['functions']:,} Python functions in {tree['files']:,} files "
                  f"from {', '.join(tree['roots'])})", "",
              "| run | device | functions encoded | wall s (start-up included) | functions/s | index s | "
              "functions/index s |", "|---|---|---|---|---|---|---|"]
    for key, label in (("device_run", f"--device {cfg['device']}"), ("cpu_run", "--device cpu (subset)")):
        run = idx.get(key)
        if run:
            lines.append(f"| {label} | {run['device']} | {run['functions']:,} | {run['wall_s']} | "
                         f"{_num(run['functions_per_s'], ',.1f')} | {run.get('index_s')} | "
                         f"{_num(run.get('functions_per_index_s'), ',.1f')} |")
    if idx.get("speedup_vs_cpu") is not None:
        lines += ["", f"Device vs this machine's CPU in functions/s: {idx['speedup_vs_cpu']}× wall clock, "
                      f"{idx.get('speedup_vs_cpu_index_s')}× in the index's own seconds."]
    return "\n".join(lines) + "\n"
