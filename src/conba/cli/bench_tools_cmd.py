"""``conba bench`` subcommands beside ``speed``: the tools of :mod:`conba.bench` and the serve load test."""

from __future__ import annotations

import click

from conba.cli.passthrough import passthrough

# name -> (module with an argparse main(), one-line summary)
TOOLS = {
    "view-stats": ("conba.bench.view_stats", "What the input view does to real data: size, fallbacks, throughput."),
    "clones-profile": ("conba.bench.clones_profile", "Where `conba clones` spends its time on an index, per step."),
    "serve-load": ("conba.serve.load_test", "Load test of `conba serve`: concurrent /search and /compare clients."),
}


def add_tools(group: click.Group) -> None:
    for name, (module, summary) in TOOLS.items():
        group.add_command(passthrough(name, module, summary, "conba bench"))
