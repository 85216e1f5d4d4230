"""``--pooling`` and ``--trust-remote-code``: how a bare Hugging Face or sentence-transformers model given
as ``-m`` is loaded (``conba.load_model(NAME, pooling=..., trust_remote_code=...)``). Re-exported by
:mod:`conba.cli.options`."""

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
