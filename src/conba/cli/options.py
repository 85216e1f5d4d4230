"""Options shared by several subcommands, so a flag means one thing everywhere (docs/CLI.md).

One short flag has one long name across all commands (tests/test_cli_flags.py checks it); options
that map to an environment variable read it through click's ``envvar=`` and show it in ``--help``.
``-i/--index`` lives in conba.cli.index_cmd, beside the index defaults it names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

MODEL_ENV = "CONBA_MODEL"
CACHE_ENV = "CONBA_CACHE"
THREADS_ENV = "CONBA_THREADS"
TOKEN_ENV = "CONBA_TOKEN"
VIEW_NAMES = ("raw", "code", "code+docs")  # conba.syntax.view.VIEWS
ENGINE_NAMES = ("torch", "onnx", "onnx-fp32")  # conba.engine.ENGINES (not imported here: it loads torch)
ENGINE_HELP = ("Inference engine: torch, onnx = ONNX Runtime with int8 weights (faster on CPU, cosine ~0.998 to "
               "torch; needs pip install 'conba[onnx]'), onnx-fp32 = ONNX Runtime, same vectors as torch.")
DEVICES = ("auto", "cpu", "cuda", "mps")
DEFAULT_DEVICE = "auto"


class AliasOption(click.Option):
    """A click option that also accepts old long names (``aliases``) without listing them in ``--help``."""

    def __init__(self, param_decls: Sequence[str], aliases: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__([*param_decls, *aliases], **kwargs)
        self.aliases = tuple(aliases)

    def _visible(self) -> list[str]:
        return [o for o in self.opts if o not in self.aliases]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        opts, self.opts = self.opts, self._visible()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts

    def get_error_hint(self, ctx: click.Context | None) -> str:
        opts, self.opts = self.opts, self._visible()
        try:
            return super().get_error_hint(ctx)
        finally:
            self.opts = opts


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


def device_option(f: Callable | None = None, *, help: str = "Where to run the model") -> Callable:
    def deco(g: Callable) -> Callable:
        return click.option(
            "--device", type=DeviceType(), default=DEFAULT_DEVICE, show_default=True,
            help=f"{help}: auto (CUDA when available, else CPU), cpu, cuda (cuda:N for one GPU) or mps.",
        )(g)

    return deco(f) if f is not None else deco


def json_out_option(f: Callable | None = None, *, help: str = "Also write every number to this JSON file.") -> Callable:
    """``-j/--json-out FILE``: a file; ``--json`` is always the flag "print JSON"."""

    def deco(g: Callable) -> Callable:
        return click.option("-j", "--json-out", "json_out", type=click.Path(dir_okay=False, path_type=Path),
                            default=None, metavar="FILE", help=help)(g)

    return deco(f) if f is not None else deco


def out_option(help: str, *, aliases: Sequence[str] = (), required: bool = True) -> Callable:
    """``-o/--out DIR``: the output folder."""
    return click.option("-o", "--out", "out", cls=AliasOption, aliases=aliases, required=required,
                        type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help=help)


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
            "--lexical-weight", "lexical_weight", type=float, default=None, metavar="W", callback=_weight,
            help=("Share of the lexical (identifier-word TF-IDF) cosine in the score: "
                  "(1 - W) * dense + W * lexical; 0 = dense only. " + (help or "Default: the index's.")).strip(),
        )(g)

    return deco(f) if f is not None else deco
