"""Options shared by several subcommands, so a flag means one thing everywhere (docs/CLI.md).

One short flag has one long name and one meaning (type and metavar) across all commands
(tests/cli/test_cli_flags.py checks it); options that map to an environment variable read it through
click's ``envvar=`` and show it in ``--help``. ``-o/--output`` is where the command's result goes: a
file (``FILE``: clones, encode) or a folder (``DIR``: train, distill, merge, ...). Options of the
training commands are made from their config dataclasses (:func:`config_option`), so defaults and
choices are written once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from conba.cli.aliases import AliasOption  # noqa: F401  (re-exported: commands import it from here)
from conba.cli.bare_options import POOLING_NAMES, bare_model_options, bare_model_settings  # noqa: F401
from conba.cli.paths import InputPath
from conba.constants import (  # noqa: F401  (the env names are re-exported: commands import them from here)
    CACHE_ENV,
    DEVICE_ENV,
    DEVICES,
    DTYPE_ENV,
    DTYPES,
    ENGINES,
    MODEL_ENV,
    THREADS_ENV,
    TOKEN_ENV,
    VIEWS,
)

VIEW_NAMES = VIEWS
ENGINE_NAMES = ENGINES
ENGINE_HELP = ("Inference engine: torch, onnx = ONNX Runtime with int8 weights (faster on CPU, cosine ~0.998 to "
               "torch; needs pip install 'conba[onnx]'), onnx-fp32 = ONNX Runtime, same vectors as torch.")
DEFAULT_DEVICE = "auto"
DTYPE_HELP = ("Inference precision: auto (float16 on CUDA, within 1e-5 cosine of float32; float32 elsewhere), "
              "float32, float16 or bfloat16 (runs on CPUs too). Vectors and index fingerprints do not depend on it.")


class FiniteFloat(click.FloatRange):
    """A number from the command line, optionally within bounds (as :class:`click.FloatRange`); NaN and
    infinities are refused: a NaN compares false with everything, so a gate such as ``--min-coverage nan``
    would never fire. Every float option uses it (tests/cli/test_reliability_floats.py walks them)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"FiniteFloat({self.min}, {self.max})" if (self.min, self.max) != (None, None) else "FiniteFloat"

    def _describe_range(self) -> str:
        """The bounds --help shows; nothing for an unbounded number (click's own says ``x<=None``)."""
        return "" if (self.min, self.max) == (None, None) else super()._describe_range()


FINITE_FLOAT = FiniteFloat()


class DeviceType(click.Choice):
    """auto, cpu, cuda or mps; ``cuda:N`` picks one GPU."""

    def __init__(self) -> None:
        super().__init__(DEVICES, case_sensitive=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value).strip().lower()
        if text.startswith("cuda:") and text[5:].isdigit():
            return text
        return super().convert(text, param, ctx)


def model_option(f: Callable | None = None, *, envvar: bool = True, help: str | None = None) -> Callable:
    """``-m/--model``; reads $CONBA_MODEL unless ``envvar=False`` (where no model means something else)."""

    def deco(g: Callable) -> Callable:
        return click.option(
            "-m", "--model", "model", default=None, metavar="M", envvar=MODEL_ENV if envvar else None,
            show_envvar=envvar,
            help=help or ("Model: 'default' (shipped), 'default-fast' (its 3-layer student), 'zero-shot', "
                          "a conba model folder or an HF encoder."),
        )(g)

    return deco(f) if f is not None else deco


def view_option(f: Callable) -> Callable:
    return click.option(
        "--view", "view", type=click.Choice(VIEW_NAMES), default=None,
        help="Input view: raw (text as is), code (no imports, license header, comments, docstrings or "
             "helpers a main never reaches), code+docs (code, keeping comments and docstrings). "
             "Default: the model's view (an existing index used without --model: the view it was built with).",
    )(f)


def engine_option(f: Callable | None = None, *, default: str | None = "torch", help: str = "") -> Callable:
    """``--engine torch|onnx|onnx-fp32`` (long flag only); ``help`` is appended to the engines' description."""

    def deco(g: Callable) -> Callable:
        return click.option("--engine", type=click.Choice(ENGINE_NAMES), default=default,
                            show_default=default is not None, help=f"{ENGINE_HELP} {help}".strip())(g)

    return deco(f) if f is not None else deco


FAST_MODEL = "default-fast"  # what --fast expands to: the distilled 3-layer student...
FAST_ENGINE = "onnx"          # ...on int8 ONNX Runtime
FAST_HELP = (f"Fast tier: shorthand for -m {FAST_MODEL} --engine {FAST_ENGINE}, the default's 3-layer distilled "
             "student on int8 ONNX Runtime (about 2.7x the default's encoding speed on CPU, 6-9 points lower "
             "MAP@R; needs pip install 'conba[onnx]'). Overrides $CONBA_MODEL; an explicit -m or --engine "
             "must agree.")


def expand_fast(ctx: click.Context, model: str | None, engine: str | None) -> tuple[str, str]:
    """(model, engine) for ``--fast``: :data:`FAST_MODEL` and :data:`FAST_ENGINE`, or a one-line
    :class:`click.UsageError` when ``-m`` or ``--engine`` was given on the command line with another value
    (a model from $CONBA_MODEL and the engine's default give way)."""
    given = {"model": (model, FAST_MODEL, "-m/--model"), "engine": (engine, FAST_ENGINE, "--engine")}
    for name, (value, wanted, flag) in given.items():
        if value is not None and value != wanted \
                and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            raise click.UsageError(f"--fast means -m {FAST_MODEL} --engine {FAST_ENGINE}: it conflicts with "
                                   f"{flag} {value}")
    return FAST_MODEL, FAST_ENGINE


def fast_option(f: Callable) -> Callable:
    """``--fast``: shorthand for ``-m default-fast --engine onnx`` (:func:`expand_fast`). The command takes
    ``model`` and ``engine`` parameters and never sees ``fast``: they arrive expanded."""

    @click.option("--fast", "fast", is_flag=True, help=FAST_HELP)
    @functools.wraps(f)
    def wrapper(*args: Any, fast: bool = False, **kwargs: Any) -> Any:
        if fast:
            kwargs["model"], kwargs["engine"] = expand_fast(click.get_current_context(), kwargs.get("model"),
                                                            kwargs.get("engine"))
        return f(*args, **kwargs)

    return wrapper


class FromEnvironment(str):
    """A ``--device`` / ``--dtype`` read from $CONBA_DEVICE / $CONBA_DTYPE: a CPU-only engine (ONNX) runs on
    the CPU in float32 with a warning instead of failing (conba.engine.device.resolve_placement)."""

    from_environment = True


def _mark_environment(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value is not None and ctx.get_parameter_source(param.name) == ParameterSource.ENVIRONMENT:
        return FromEnvironment(value)
    return value


def device_option(f: Callable | None = None, *, help: str = "Where to run the model") -> Callable:
    """``--device auto|cpu|cuda[:N]|mps`` (reads $CONBA_DEVICE)."""

    def deco(g: Callable) -> Callable:
        return click.option(
            "--device", type=DeviceType(), default=DEFAULT_DEVICE, show_default=True, envvar=DEVICE_ENV,
            show_envvar=True, callback=_mark_environment,
            help=f"{help}: auto (CUDA when available, else CPU), cpu, cuda (cuda:N for one GPU) or mps.",
        )(g)

    return deco(f) if f is not None else deco


def dtype_option(f: Callable | None = None, *, help: str = "") -> Callable:
    """``--dtype auto|float32|float16|bfloat16`` (reads $CONBA_DTYPE): the precision a model runs in."""

    def deco(g: Callable) -> Callable:
        return click.option("--dtype", type=click.Choice(DTYPES, case_sensitive=False), default="auto",
                            show_default=True, envvar=DTYPE_ENV, show_envvar=True, callback=_mark_environment,
                            help=f"{DTYPE_HELP} {help}".strip())(g)

    return deco(f) if f is not None else deco


def placement_options(f: Callable | None = None, *, help: str = "Where to run the model") -> Callable:
    """``--device`` and ``--dtype``, for every command that runs a model for inference."""

    def deco(g: Callable) -> Callable:
        return device_option(help=help)(dtype_option(g))

    return deco(f) if f is not None else deco


def _writable_json_out(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """-j FILE checked when the command line is read, not after the work it reports."""
    if value is not None:
        from conba.cli.paths import check_output_file

        check_output_file(str(value), None, "result.json")
    return value


def json_out_option(f: Callable | None = None, *, help: str = "Also write every number to this JSON file.") -> Callable:
    """``-j/--json-out FILE``: a file; ``--json`` is always the flag "print JSON" (:mod:`conba.cli.formats`)."""

    def deco(g: Callable) -> Callable:
        return click.option("-j", "--json-out", "json_out", type=click.Path(dir_okay=False, path_type=Path),
                            default=None, metavar="FILE", help=help, callback=_writable_json_out)(g)

    return deco(f) if f is not None else deco


def output_dir_option(help: str, *, required: bool = True) -> Callable:
    """``-o/--output DIR``: the folder the command writes its result to (parameter ``out``); the old
    ``--out`` still works, unlisted."""
    return click.option("-o", "--output", "out", cls=AliasOption, aliases=["--out"], required=required,
                        type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help=help)


def output_file_option(help: str = "Output file ('-' for stdout).", *, default: str | None = "-") -> Callable:
    """``-o/--output FILE``: the file the command writes its result to (parameter ``output``; '-': stdout)."""
    # not dir_okay=False: the command names the problem itself (a folder, inside the index, ...)
    return click.option("-o", "--output", "output", type=click.Path(allow_dash=True),
                        default=default, show_default=default is not None, metavar="FILE", help=help)


def index_option(f: Callable) -> Callable:
    """``-i/--index DIR``: the index folder; reads $CONBA_INDEX."""
    from conba.index.defaults import DEFAULT_INDEX_DIR, INDEX_ENV

    return click.option(
        "-i", "--index", "index_dir", default=None, metavar="DIR", envvar=INDEX_ENV, show_envvar=True,
        help=f"Index folder (default: {DEFAULT_INDEX_DIR} in the current directory).",
    )(f)


def resolve_index_dir(value: str | None) -> str:
    from conba.index.defaults import default_index_dir

    return default_index_dir(value)


def resolve_model(value: str | None) -> str | None:
    """An explicit --model or $CONBA_MODEL; None lets an existing index use the model it was built with."""
    return value or os.environ.get(MODEL_ENV) or None


def parse_size(value: str) -> int:
    """'1MB', '500k', '2000000' -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)i?b?\s*", str(value).lower())
    if not m:
        raise click.BadParameter(f"not a size: {value!r} (e.g. 1MB, 500KB, 200000)")
    factor = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}[m.group(2)]
    return int(float(m.group(1)) * factor)


def progress_option(f: Callable | None = None, *, help: str = "Progress bars") -> Callable:
    """``--progress/--no-progress`` (default: when stderr is a terminal)."""

    def deco(g: Callable) -> Callable:
        return click.option("--progress/--no-progress", default=None, help=f"{help} (default: when a terminal).")(g)

    return deco(f) if f is not None else deco


def seed_option(f: Callable | None = None, *, default: int = 0, help: str = "Random seed.") -> Callable:
    def deco(g: Callable) -> Callable:
        return click.option("--seed", type=int, default=default, show_default=True, metavar="N", help=help)(g)

    return deco(f) if f is not None else deco


def neighbors_option(help: str) -> Callable:
    """``-k/--neighbors N``: how many nearest neighbours (at least 1; default 10)."""

    def deco(g: Callable) -> Callable:
        return click.option("-k", "--neighbors", "neighbors", type=click.IntRange(1), default=10, show_default=True,
                            metavar="N", help=help)(g)

    return deco


def batch_size_option(f: Callable | None = None, *, default: int | None = None,
                      help: str = "Snippets per encoder batch (default: 32 on a CPU, 256 on a GPU).") -> Callable:
    """``-b/--batch-size N``: snippets per encoder batch (encoding, never a training batch); None: the
    plan for the device (:func:`conba.engine.batching.plan_batches`)."""

    def deco(g: Callable) -> Callable:
        return click.option("-b", "--batch-size", "batch_size", type=click.IntRange(1), default=default,
                            show_default=default is not None, metavar="N", help=help)(g)

    return deco(f) if f is not None else deco


def limit_option(help: str, *, default: int = 0) -> Callable:
    """``-n/--limit N``: use about N records / snippets (0: all, where the command allows it)."""
    return click.option("-n", "--limit", "limit", type=click.IntRange(0), default=default, show_default=True,
                        metavar="N", help=help)


def data_files_option(help: str, *, multiple: bool = True, default: Any = None, **kwargs: Any) -> Callable:
    """``-d/--data FILE``: data file(s) (grouped JSONL); a folder of them is ``--data-dir DIR``."""
    return click.option("-d", "--data", "data", multiple=multiple, default=default,
                        type=InputPath(dir_okay=False, path_type=Path), metavar="FILE", help=help, **kwargs)


def time_budget_option(help: str = "Stop training after this many seconds (0: no limit).", *,
                       default: float = 0.0) -> Callable:
    """``--time-budget SECONDS``: always seconds."""
    return click.option("--time-budget", "time_budget", type=FiniteFloat(0), default=default,
                        show_default=True, metavar="SECONDS", help=help)


def _field_default(field: dataclasses.Field) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    raise TypeError(f"{field.name} has no default")


def config_option(config: type, name: str, *decls: str, help: str | None = None,
                  choices: Sequence[str] | None = None, **kwargs: Any) -> Callable:
    """An option for the field ``name`` of the dataclass ``config`` (TrainConfig, DistillConfig, ...):
    its default, type and (with ``choices``, the config module's tuple) choices come from there, so the
    command line never repeats them. ``decls`` are the flags (default ``--field-name``)."""
    field = {f.name: f for f in dataclasses.fields(config)}[name]
    default = _field_default(field)
    decls = decls or ("--" + name.replace("_", "-"),)
    if isinstance(default, bool) and "is_flag" not in kwargs and not any("/" in d for d in decls):
        kwargs["is_flag"] = True
    elif choices is not None:
        kwargs.setdefault("type", click.Choice(list(choices)))
    elif "type" not in kwargs and isinstance(default, float):
        kwargs["type"] = FINITE_FLOAT
    elif "type" not in kwargs and isinstance(default, (int, str)):
        kwargs["type"] = type(default)
    kwargs.setdefault("show_default", not isinstance(default, bool))
    return click.option(*decls, name, default=default, help=help, **kwargs)


def _weight(ctx: click.Context, param: click.Parameter, value: Any) -> float | None:
    if value is None:
        return None
    from conba.errors import ConfigError
    from conba.lexical.fusion import check_weight

    try:
        return check_weight(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def lexical_weight_option(f: Callable | None = None, *, help: str = "") -> Callable:
    """``--lexical-weight W`` (long flag only): the lexical share of the fused score, 0..1."""

    def deco(g: Callable) -> Callable:
        return click.option(
            "--lexical-weight", "lexical_weight", type=FINITE_FLOAT, default=None, metavar="W", callback=_weight,
            help=("Share of the lexical (identifier-word TF-IDF) cosine in the score: "
                  "(1 - W) * dense + W * lexical; 0 = dense only. " + (help or "Default: the index's.")).strip(),
        )(g)

    return deco(f) if f is not None else deco


def restart_option(help: str = "Discard a saved checkpoint in OUT instead of resuming.") -> Callable:
    return click.option("--restart", is_flag=True, help=help)


def dev_files_option(help: str, *, name: str = "dev") -> Callable:
    """``-D/--dev FILE``: dev file(s) (repeatable)."""
    return click.option("-D", "--dev", name, multiple=True, type=InputPath(dir_okay=False, path_type=Path),
                        metavar="FILE", help=help)


def threshold_option(help: str) -> Callable:
    """``-t/--threshold T|auto``: a clone threshold (a cosine) or ``auto``, the model's."""
    return click.option("-t", "--threshold", default="auto", show_default=True, metavar="T|auto", help=help)

