"""``--pooling`` and ``--trust-remote-code``: how a bare Hugging Face or sentence-transformers model given
as ``-m`` is loaded (``conba.load_model(NAME, pooling=..., trust_remote_code=...)``). Re-exported by
:mod:`conba.cli.options`. Commands whose runs record only a model's name (``bench speed``, ``distill``,
``prune train``: resumable, or compared against other runs) take them only to refuse them in one line
(:func:`bare_model_refused`), saying how to give such a model as a folder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

BARE_MODEL_META = "conba.bare_model"  # ctx.meta key: the load_model options --pooling / --trust-remote-code give
POOLING_NAMES = ("mean", "cls", "max", "lasttoken", "weightedmean")  # conba.encoder.readout.POOLINGS (no torch here)


def _bare_model(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value:
        ctx.meta.setdefault(BARE_MODEL_META, {})[param.name] = value
    return value


def bare_model_options(f: Callable) -> Callable:
    """``--pooling`` and ``--trust-remote-code``, for a bare Hugging Face / sentence-transformers model given
    as -m (not exposed to the command: :func:`bare_model_settings` hands them to ``load_model``)."""
    f = click.option("--trust-remote-code", "trust_remote_code", is_flag=True, expose_value=False,
                     callback=_bare_model,
                     help="Let a bare model run code from its folder or hub repository (never the default; "
                          "recorded in a saved model, which then needs it again).")(f)
    return click.option("--pooling", "pooling", type=click.Choice(POOLING_NAMES), default=None, expose_value=False,
                        callback=_bare_model,
                        help="Read-out of a bare model given as -m: overrides its own (its sentence-transformers "
                             "Pooling module, else the last token for decoders, the mean for encoders).")(f)


def bare_model_settings() -> dict[str, Any]:
    """The ``load_model`` keyword arguments the current command's --pooling / --trust-remote-code give."""
    ctx = click.get_current_context(silent=True)
    return dict(ctx.meta.get(BARE_MODEL_META, {})) if ctx is not None else {}


def _refuse(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if not value:
        return value
    name = ctx.params.get("model") or "NAME"
    what = f"`{ctx.command_path}` records only the model's name, so it takes no {param.opts[0]}"
    if param.name == "trust_remote_code":
        raise click.ClickException(f"{what}: it cannot run a model that needs its own code; use such a model with "
                                   "encode, index, search, clones, map, compare, eval, calibrate, eval-repo or serve")
    raise click.ClickException(f"{what}: save the bare model with its read-out once (python -c \"import conba; "
                               f"conba.load_model('{name}', pooling='{value}').save('DIR')\") and pass -m DIR")


def bare_model_refused(f: Callable) -> Callable:
    """``--pooling`` and ``--trust-remote-code`` for a command that cannot honour them: given, they fail in one
    line that says how to pass such a model (a saved model folder keeps its read-out)."""
    f = click.option("--trust-remote-code", "trust_remote_code", is_flag=True, expose_value=False,
                     callback=_refuse, help="Not taken here (models that run their own code are refused).")(f)
    return click.option("--pooling", "pooling", type=click.Choice(POOLING_NAMES), default=None, expose_value=False,
                        callback=_refuse, help="Not taken here: save the bare model with its read-out "
                                               "(conba.load_model(NAME, pooling=...).save(DIR)) and pass -m DIR.")(f)
