"""``conba bench`` subcommands beside ``speed``: the tools of :mod:`conba.bench` and the serve load test."""

from __future__ import annotations

import click

from conba.cli.passthrough import add_passthroughs

# name -> (module with an argparse main(), one-line summary)
TOOLS = {
    "view-stats": ("conba.bench.view_stats", "What the input view does to real data: size, fallbacks, throughput."),
    "clones-profile": ("conba.bench.clones_profile", "Where `conba clones` spends its time on an index, per step."),
    "index-scale": ("conba.bench.index_scale",
                    "`conba index` / search / clones at scale on a built corpus; FAISS flat vs HNSW; ANN at 1M."),
    "ivf": ("conba.bench.ivf", "The IVF-SQ8 + re-rank index at 1M through the production path: build, query, update."),
    "ivf-encode": ("conba.bench.ivf_encode", "Real embeddings of an index's functions for `conba bench ivf --real`."),
    "ivf-real": ("conba.bench.ivf_real", "Real code in the IVF index: recall vs size and lists probed; the padded 1M."),
    "plan-100m": ("conba.bench.plan", "The 100M-function plan, simulated from `conba bench ivf` measurements."),
    "plagiarism-eval": ("conba.bench.plagiarism_eval",
                        "`conba plagiarism` as a teacher runs it on plagiarism_dev: acc@1, AUC, the threshold."),
    "plagiarism-scale": ("conba.bench.plagiarism_scale",
                         "`conba plagiarism` on 500 / 5,000 submissions: end-to-end time and peak memory."),
    "serve-load": ("conba.serve.load_test", "Load test of `conba serve`: concurrent /search and /compare clients."),
}


def add_tools(group: click.Group) -> None:
    add_passthroughs(group, TOOLS, "conba bench")
