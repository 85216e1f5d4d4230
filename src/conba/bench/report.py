"""Machine description and the human-readable table of ``conba bench speed``."""

from __future__ import annotations

import os
import platform

from conba.bench.probes import cpu_model
from conba.utils.versions import package_version

LABELS = {
    "st": "sentence-transformers encode (peer)",
    "exact": "conba exact (torch)",
    "raw": "conba exact, raw text (no input view)",
    "sdtp": "conba + SDTP (torch)",
    "onnx": "conba + ONNX int8",
    "both": "conba + SDTP + ONNX int8",
    "fast": "student (torch)",
    "fast-onnx": "student + ONNX int8",
}


def machine_info(threads: int, device=None) -> dict:
    import torch

    gpu = {"gpu": torch.cuda.get_device_name(device)} if device is not None and device.type == "cuda" else {}
    return {**gpu, "cpu": cpu_model(), "cores": os.cpu_count(), "torch_threads": threads,
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": package_version("transformers"), "onnxruntime": package_version("onnxruntime"),
            "sentence_transformers": package_version("sentence-transformers"), "platform": platform.platform()}


def _fmt(value, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def format_report(report: dict) -> str:
    """Markdown: header lines, then one table row per variant."""
    m, mach = report["model"], report["machine"]
    lines = [
        f"conba bench speed — {report['timed_snippets']} snippets of {report['config']['data']} "
        f"(seed {report['config']['seed']}, mean {report.get('timed_tokens_mean')} tokens, cap {m['max_length']}), "
        f"batch {report.get('batch', {}).get('size', report['config']['batch_size'])}, median of "
        f"{report['config']['repeats']} alternating repeats"
        + (f", on {report['placement']['device']} in {report['placement']['dtype']}" if "placement" in report else ""),
        f"model {m['name']} (fingerprint {m['fingerprint']}, head {m['head']})",
        f"machine: {mach['gpu'] + ', ' if mach.get('gpu') else ''}{mach['cpu']}, "
        f"{mach['cores']} cores, {mach['torch_threads']} threads; torch {mach['torch']}, "
        f"onnxruntime {mach['onnxruntime']}, sentence-transformers {mach['sentence_transformers']}; "
        f"load average before {report.get('load_before')} after {report.get('load_after')}",
    ]
    if report.get("pruner"):
        p = report["pruner"]
        lines.append(f"SDTP: layers {p['layers']}, keep ratio {p['keep_ratio']}, first {p['keep_first']} + last "
                     f"{p['keep_tail']:.0%} kept, dense-work fraction {p['token_fraction']} (from {p['source']})")
    if report.get("student"):
        s = report["student"]
        lines.append(f"student: {s['layers']} layers (teacher layers {s['teacher_layers']}), fingerprint "
                     f"{s['fingerprint']} (from {s['source']})")
    if report.get("map_data"):
        md = report["map_data"]
        lines.append(f"MAP@R: mean cross-language MAP@R on {md['file']} ({md['records']} snippets, "
                     f"{md['groups']} groups)")
    lines += ["", "| variant | snippets/s (min–max) | × sentence-transformers | × exact | CPU ms/snippet | "
                  "MAP@R | Δ points | cos to exact (mean / min) |",
              "|---|---|---|---|---|---|---|---|"]
    for name, row in report["variants"].items():
        speed = (f"{row['snippets_per_s']:.1f} ({row['snippets_per_s_min']:.1f}–{row['snippets_per_s_max']:.1f})"
                 if "snippets_per_s" in row else "—")
        cos = (f"{row['cos_to_exact_mean']:.5f} / {row['cos_to_exact_min']:.5f}" if "cos_to_exact_mean" in row
               else "—")
        lines.append(f"| {LABELS.get(name, name)} | {speed} | {_fmt(row.get('ratio_to_st'), '.2f')} | "
                     f"{_fmt(row.get('ratio_to_exact'), '.2f')} | {_fmt(row.get('cpu_ms_per_snippet'), '.0f')} | "
                     f"{_fmt(row.get('map_at_r'), '.4f')} | {_fmt(row.get('map_delta_points'), '+.2f')} | {cos} |")
    if report.get("cos_headless_exact_vs_st"):
        c = report["cos_headless_exact_vs_st"]
        lines += ["", f"cosine conba exact (no head, mean pooling) vs sentence-transformers: mean {c['mean']:.7f}, "
                      f"min {c['min']:.7f} ({'PASS' if c['pass_0.9999'] else 'FAIL'} ≥ 0.9999)"]
    if "st" in report["variants"] and "st" not in report.get("skipped", {}):
        lines.append("sentence-transformers has no conba head: its MAP@R is the backbone with mean pooling.")
    for name, why in report.get("skipped", {}).items():
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines)
