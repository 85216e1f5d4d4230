"""``conba experiment`` subcommands for the research tools (sweeps, significance, data builders, browser
checks): each runs its module's argparse ``main`` on the rest of the command line."""

from __future__ import annotations

import click

from conba_research.passthrough import add_passthroughs

# name -> (module with an argparse main(), one-line summary)
TOOLS = {
    "significance": ("conba_research.pair_significance",
                     "Per language pair: is a method's MAP@R beyond chance of a baseline's (eval-repo -j JSON)."),
    "lexical-sweep": ("conba_research.lexical_sweep", "The lexical weight on real and curated dev code together."),
    "candidates": ("conba_research.real_code_candidates",
                   "Score candidate models on real and curated dev code from cached lower-layer states."),
    "sdtp-sweep": ("conba_research.sdtp_sweep", "SDTP layer schedule and keep ratio on a dev subset."),
    "student-layers": ("conba_research.student_layers", "Which teacher layers (and width) a distilled student keeps."),
    "train-sweep": ("conba_research.train_sweep", "Several `conba train` runs side by side, then `conba eval` each."),
    "gpu-train": ("conba_research.gpu_train.cli", "The GPU sweep of full-backbone training: prepare, run, import."),
    "header-robustness": ("conba_research.header_robustness", "MAP@R with and without a shared realistic header."),
    "pretrain-report": ("conba_research.pretrain_report", "Collect a pretrain-effect run into JSON, PNG, markdown."),
    "polyglot": ("conba_research.polyglot", "Recall and precision of the planted clone pairs of examples/polyglot."),
    "augment-data": ("conba_research.builders.augment_data", "Grouped JSONL with renamed copies of every record."),
    "reference-idf": ("conba_research.builders.reference_idf",
                      "The lexical channel's reference document frequencies, from training files."),
    "cpu-training-data": ("conba_research.builders.cpu_training_data", "The training files of the CPU recipe."),
    "mine-real-code": ("conba_research.builders.mine_real_code",
                       "Mine real code into grouped JSONL: function, its doc, a renamed copy."),
    "serve-page-check": ("conba_research.browser.serve_page",
                         "Drive the `conba serve` search page in headless Chromium; screenshot."),
    "map-report-check": ("conba_research.browser.map_report",
                         "Look at a `conba map` HTML report in headless Chromium; screenshot."),
}


def add_tools(group: click.Group) -> None:
    add_passthroughs(group, TOOLS, "conba experiment")
