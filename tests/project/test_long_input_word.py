"""One word for long inputs: a snippet longer than the backbone's token limit is cut into *windows*, read by
the *window head*. The code once also said chunks and fragments; this test keeps those words from coming back
in that sense: in file names, code, CLI options and docs (not in dated history: docs/BENCHMARKS.md,
docs/experiments/, whose wording stays as it was written).

What may still say chunk or fragment, and why:

* the file-format names, kept so that saved models, indexes, exports and runs load as they are
  (:mod:`conba.model.persist`): ``max_chunks`` and ``max_chunks_per_file`` (config keys), ``fragment_head/``
  with ``fragment_config.json`` and ``fragment_head.safetensors``, ``fragment_head.onnx`` (query export), the
  research outputs ``fragments.json``, ``fragments.md``, ``fragment_runs.json``;
* the old Python names and flags that still work with a pointer (deprecated aliases), where they are handled;
* other meanings of the words: streaming rows in chunks, a linear scan's chunks, matched plagiarism fragments.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[2]
WORD = re.compile(r"[\w.-]*(?i:chunk|fragment)[\w.-]*")

# The old long-input names: never in a file that uses the words in another sense.
OLD_NAMES = re.compile(r"max_chunks|chunk_ids\(|pool_chunks|\bChunked\b|Fragment(Head|Config)|fragment_head|"
                       r"max_fragments|encode_fragments|engine\.chunks|heads\.fragments|model\.fragments")

FILE_FORMAT = {"fragment_config.json", "fragment_head.safetensors", "fragment_head.onnx"}

# Files of the long-input code and docs, and the old or file-format names each may say.
KEPT: dict[str, set[str]] = {
    "docs/python-api.md": {"chunk", "fragment", "fragment_head", "max_chunks", "model.fragment_head",
                           "model.max_chunks", "fragments"},  # the glossary line; "its section on fragment heads"
    "docs/speed.md": {"max_chunks"},
    "src/conba/engine/windows.py": {"chunk", "fragment", "max_chunks"},  # the glossary line
    "src/conba/engine/query_encoder.py": {"fragment_head", "max_chunks"},  # the manifest's keys
    "src/conba/engine/query_export.py": {"fragment_head", "max_chunks"},
    "src/conba/heads/window_head.py": {"fragments", "conba_fragment_reader"},  # safetensors metadata key
    "src/conba/model/config.py": {"chunks", "max_chunks"},
    "src/conba/model/core.py": {"chunks", "fragment_head", "max_chunks"},  # the old encode() keyword, hashed key
    "src/conba/model/old_names.py": {"chunks", "fragments", "fragment_head", "max_chunks", "model.fragment_head",
                                     "model.max_chunks"},
    "src/conba/model/persist.py": {"chunks", "fragments", "fragment_head", "max_chunks"},
    "src/conba/pretrain/config.py": {"chunks", "max_chunks_per_file"},
    "docs/CLI.md": {"--max-chunks", "--max-chunks-per-file", "--fragments", "fragments"},  # the hidden aliases
    "src/conba/cli/merge_cmd.py": {"--max-chunks"},
    "src/conba/cli/pretrain_cmd.py": {"--max-chunks-per-file"},
    "src/conba/default_model/conba_config.json": {"max_chunks", "fragment_head", "Fragment", "fragments",
                                                  "fragments-lr3e-4"},  # provenance text of the shipped model
    "src/conba/default_fast/conba_config.json": {"max_chunks"},
    "src/conba/prune/default/prune_config.json": {"fragment"},  # provenance text
    "research/src/conba_research/cli_windows.py": {"--fragments", "fragments", "fragments.json", "fragments.md",
                                                   "fragment_runs.json"},
    "research/src/conba_research/renamed_commands.py": {"--fragments", "fragment", "fragments"},
    "research/src/conba_research/header_robustness.py": {"--max-chunks"},
    "research/src/conba_research/window_cache.py": {"--fragments", "fragments"},  # the cache folder's name
    "research/src/conba_research/window_e2e.py": {"--fragments"},
    "research/src/conba_research/window_fight.py": {"fragment_runs.json"},
    "research/src/conba_research/window_report.py": {"fragments", "fragments.json", "fragments.md"},
    "research/src/conba_research/window_ship.py": {"--max-chunks", "fragment_head", "info.fragment_head", "max_chunks"},
    "research/src/conba_research/window_significance.py": {"--fragments"},
    "research/src/conba_research/window_speed.py": {"--fragments"},
    "research/tests/test_experiments_windows.py": {"--fragments", "fragments", "fragments.json", "fragments.md",
                                                   "fragment_runs.json"},
    "research/tests/test_window_ship.py": {"fragment_head", "max_chunks"},
    "tests/model/test_model_window_head.py": {"fragment_head"},
    "tests/pretrain/test_pretrain.py": {"max_chunks_per_file"},
    "tests/engine/test_windows.py": {"fragment_head", "m.fragment_head", "m.max_chunks", "max_chunks",
                                     "model.fragment_head", "model.max_chunks",
                                     "test_config_key_is_max_chunks_on_disk"},
    "tests/train/test_checkpoint.py": {"fragment_head", "self.fragment_head", "old.fragment_head.weight",
                                       "old.fragment_head.bias"},
    "README.md": {"fragments"},  # the plagiarism report's aligned fragments
    "docs/development.md": {"chunked"},  # chunked caches (utils/cache.py)
}
SELF = "tests/project/test_long_input_word.py"

# Files where the words mean something else (any token but the old long-input names).
OTHER_MEANING: dict[str, str] = {
    "src/conba/plagiarism/": "matched fragments of two submissions",
    "tests/plagiarism/test_plagiarism": "matched fragments of two submissions",
    "docs/plagiarism.md": "matched fragments of two submissions",
    "research/src/conba_research/heads/scan.py": "the linear scan's chunks of the sequence",
    "research/src/conba_research/heads/selective_scan.py": "the linear scan's chunks of the sequence",
    "research/tests/test_heads_scan.py": "the linear scan's chunks of the sequence",
    "src/conba/utils/cache.py": "arrays cached in chunks of rows",
    "src/conba/train/": "arrays cached in chunks of rows",
    "src/conba/bench/speed.py": "embeddings cached in chunks of rows",
    "src/conba/index/": "rows read, written and committed in chunks",
    "src/conba/text.py": "identifier chunks of the lexical channel",
    "src/conba/source/": "line ranges of a source file",
    "src/conba/serve/limits.py": "chunked HTTP bodies",
    "tests/serve/test_serve_api.py": "chunked HTTP bodies",
    "tests/index/test_index_ivf.py": "vectors streamed in chunks",
    "tests/eval/test_eval_metrics.py": "the metrics' chunked path",
    "tests/helpers/__init__.py": "vector files in chunks",
    "research/src/conba_research/bench/": "vectors streamed and stored in chunks",
    "research/tests/test_bench_": "vectors streamed and stored in chunks",
    "research/src/conba_research/gpu_train/": "work split in chunks over processes, bytes of a pack",
    "research/src/conba_research/noise.py": "work split in chunks over processes, cached rows",
    "research/src/conba_research/window_cache.py": "window vectors cached in chunks of rows",
}

HISTORY = ("docs/BENCHMARKS.md", "docs/experiments/", "docs/results/", "tests/mapping/data/")


def _files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "src", "research", "tests", "scripts", "docs", "README.md",
                             "mkdocs.yml"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [f for f in listed if f.endswith((".py", ".md", ".yml", ".html", ".json", ".toml"))
            and not f.startswith(HISTORY) and (ROOT / f).is_file()]


def _other_meaning(path: str) -> bool:
    return any(path.startswith(prefix) for prefix in OTHER_MEANING)


def test_no_file_is_named_chunk_or_fragment():
    named = [f for f in _files() if re.search(r"(?i)chunk|fragment", Path(f).name) and Path(f).name not in FILE_FORMAT]
    assert not named, f"long inputs are cut into windows: rename {named}"


def test_code_and_docs_say_window():
    wrong = []
    for path in _files():
        if path == SELF:
            continue
        text = (ROOT / path).read_text(encoding="utf-8")
        if _other_meaning(path):
            wrong += [f"{path}: {m.group(0)}" for m in OLD_NAMES.finditer(text)]
            continue
        allowed = FILE_FORMAT | KEPT.get(path, set())
        wrong += [f"{path}: {m.group(0)}" for m in WORD.finditer(text) if m.group(0) not in allowed]
    assert not wrong, ("a long snippet is cut into windows, read by the window head (the words chunk and fragment "
                       "are kept only for file-format names, old names that still work, and other meanings: "
                       "see this test's docstring):\n" + "\n".join(sorted(set(wrong))))


def test_cli_options_say_window():
    from conba.cli.aliases import AliasOption
    from conba.cli.main import cli

    def walk(group: click.Command, path: str):
        if isinstance(group, click.Group):
            ctx = click.Context(group)
            for name in group.list_commands(ctx):
                assert not re.search(r"(?i)chunk|fragment", name), f"{path} {name}: the word is window"
                yield from walk(group.get_command(ctx, name), f"{path} {name}")
        else:
            yield path, group

    wrong = []
    for path, command in walk(cli, "conba"):
        for param in command.params:
            opts = param._visible() if isinstance(param, AliasOption) else list(param.opts)  # not the old aliases
            wrong += [f"{path} {o}" for o in opts if re.search(r"(?i)chunk|fragment", o)]
    assert not wrong, f"options named for long inputs say window: {wrong}"


def test_old_flags_still_work():
    """The old spellings are hidden aliases that mean the same (docs/CLI.md, "Hidden aliases")."""
    from conba.cli.merge_cmd import merge_cmd
    from conba.cli.pretrain_cmd import pretrain

    ctx = merge_cmd.make_context("merge", ["m", "-a", "1", "-o", "out", "--max-chunks", "3"])
    assert ctx.params["max_windows"] == 3
    ctx = pretrain.make_context("pretrain", ["data", "-o", "out", "--max-chunks-per-file", "2"])
    assert ctx.params["max_windows_per_file"] == 2
