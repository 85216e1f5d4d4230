"""``conba bench`` developer tools beside ``gpu`` and ``results``: argparse tools run through
:func:`conba_research.passthrough.passthrough`, one click command each (the ``bench.NAME`` entry points of
research/pyproject.toml name them)."""

from __future__ import annotations

from conba_research.passthrough import passthrough

# name -> (module with an argparse main(), one-line summary)
TOOLS = {
    "view-stats": ("conba_research.bench.view_stats",
                   "What the input view does to real data: size, fallbacks, throughput."),
    "clones-profile": ("conba_research.bench.clones_profile",
                       "Where `conba clones` spends its time on an index, per step."),
    "index-scale": ("conba_research.bench.index_scale",
                    "`conba index` / search / clones at scale on a built corpus; FAISS flat vs HNSW; ANN at 1M."),
    "ivf": ("conba_research.bench.ivf",
            "The IVF-SQ8 + re-rank index at 1M through the production path: build, query, update."),
    "ivf-encode": ("conba_research.bench.ivf_encode",
                   "Real embeddings of an index's functions for `conba bench ivf --real`."),
    "ivf-real": ("conba_research.bench.ivf_real",
                 "Real code in the IVF index: recall vs size and lists probed; the padded 1M."),
    "plan-100m": ("conba_research.bench.plan",
                  "The 100M-function plan, simulated from `conba bench ivf` measurements."),
    "mcp-latency": ("conba_research.bench.mcp_latency",
                    "`conba mcp` over stdio: start to first answer, and each tool's first and median answer time."),
    "plagiarism-eval": ("conba_research.bench.plagiarism_eval",
                        "`conba plagiarism` as a teacher runs it on plagiarism_dev: acc@1, AUC, the threshold."),
    "plagiarism-scale": ("conba_research.bench.plagiarism_scale",
                         "`conba plagiarism` on 500 / 5,000 submissions: end-to-end time and peak memory."),
    "first-answer": ("conba_research.bench.first_answer",
                     "Time to first answer: cold search / compare / map / index / serve against `import torch`."),
    "serve-load": ("conba_research.bench.serve_load",
                   "Load test of `conba serve`: concurrent /search and /compare clients."),
}


def _tool(name: str):
    module, summary = TOOLS[name]
    return passthrough(name, module, summary, "conba bench")


view_stats = _tool("view-stats")
clones_profile = _tool("clones-profile")
index_scale = _tool("index-scale")
ivf = _tool("ivf")
ivf_encode = _tool("ivf-encode")
ivf_real = _tool("ivf-real")
plan_100m = _tool("plan-100m")
serve_load = _tool("serve-load")
mcp_latency = _tool("mcp-latency")
plagiarism_eval = _tool("plagiarism-eval")
plagiarism_scale = _tool("plagiarism-scale")
first_answer = _tool("first-answer")
