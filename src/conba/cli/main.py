"""The ``conba`` command line. Subcommands are imported lazily so ``conba --help`` stays fast."""

from __future__ import annotations

import importlib

import click

from conba.cli.plugins import load_command, plugin_commands

# name -> (module, attribute, short help). Add a subcommand by adding a line here.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "train": ("conba.cli.train_cmd", "train", "Train a head (and optionally the backbone) on grouped pairs."),
    "eval": ("conba.cli.eval_cmd", "eval_cmd", "Evaluate cross-language retrieval and clone detection."),
    "eval-repo": ("conba.cli.eval_repo_cmd", "eval_repo", "Evaluate on real repositories: file retrieval, clones."),
    "encode": ("conba.cli.encode_cmd", "encode", "Embed code snippets; writes JSONL vectors."),
    "index": ("conba.cli.index_cmd", "index", "Index a codebase's functions (incremental, resumable)."),
    "search": ("conba.cli.search_cmd", "search", "Find the indexed functions most similar to a snippet."),
    "clones": ("conba.cli.clones_cmd", "clones", "Find clone pairs/classes in an index (JSONL, CSV, HTML)."),
    "map": ("conba.cli.map_cmd", "map_cmd", "Port coverage: each function's counterpart in another tree, or missing."),
    "calibrate": ("conba.cli.calibrate_cmd", "calibrate_cmd", "Clone threshold for a target precision on dev data."),
    "plagiarism": ("conba.cli.plagiarism_cmd", "plagiarism",
                   "Copies among an assignment's submissions, across languages (JSONL, CSV, HTML)."),
    "compare": ("conba.cli.compare_cmd", "compare", "Similarity of two files or snippets; clone or not."),
    "serve": ("conba.cli.serve_cmd", "serve", "Serve search/compare/encode/clones over HTTP (model kept warm)."),
    "mcp": ("conba.cli.mcp_cmd", "mcp", "MCP server for coding agents: counterparts, port status, search (warm)."),
    "prune": ("conba.cli.prune_cmd", "prune", "SDTP token pruning: train a pruning module for faster encoding."),
    "bench": ("conba.cli.bench_cmd", "bench", "Benchmarks (speed: conba variants vs sentence-transformers)."),
    "merge": ("conba.cli.merge_cmd", "merge_cmd", "WiSE-FT: average a fine-tuned model's weights with its base."),
    "distill": ("conba.cli.distill_cmd", "distill", "A shallower, faster student of a model (layer dropping)."),
    "pretrain": ("conba.cli.pretrain_cmd", "pretrain", "Continued pretraining of the backbone (MLM, RTD)."),
}


class LazyGroup(click.Group):
    """The product's commands (imported when run) and those other distributions plug in
    (:mod:`conba.cli.plugins`: ``conba experiment`` when the research suite is installed)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *plugin_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, attr, _ = COMMANDS[cmd_name]
            return getattr(importlib.import_module(module), attr)
        point = plugin_commands().get(cmd_name)
        return load_command(point) if point is not None else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        plugged = plugin_commands()
        rows = [(name, COMMANDS[name][2] if name in COMMANDS else load_command(plugged[name]).get_short_help_str(80))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="conba")
def cli() -> None:
    """conba: find functionally equivalent code across programming languages.

    A flag means the same in every command (-m model, -i index, -o where the result goes, -j JSON file,
    --json JSON output, ...; docs/CLI.md). Each command's --help names the variables it reads.

    \b
    Environment:
      CONBA_MODEL    default model for every command (name or folder; default: the shipped model)
      CONBA_INDEX    default index folder (default: ./.conba-index)
      CONBA_TOKEN    bearer token that `conba serve` requires and `conba.Client` sends
      CONBA_THREADS  CPU threads of torch and ONNX Runtime when encoding
      CONBA_DEVICE   --device of every command that runs a model: auto (CUDA when available), cpu, cuda[:N], mps
      CONBA_DTYPE    --dtype of inference: auto (float16 on CUDA, else float32), float32, float16, bfloat16
      CONBA_CACHE    feature and embedding cache (default: ~/.cache/conba)
      CONBA_DEBUG    1: show the full traceback of any error (default: expected errors in one line)
    """


if __name__ == "__main__":
    cli()
