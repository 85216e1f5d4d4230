"""``--pooling`` and ``--trust-remote-code``: how a bare Hugging Face or sentence-transformers model given
as ``-m`` is loaded (``conba.load_model(NAME, pooling=..., trust_remote_code=...)``). Re-exported by
:mod:`conba.cli.options`. Commands whose runs record only a model's name (``bench speed``, ``distill``,
``prune train``: resumable, or compared against other runs) do not have them; given there, they fail in one
line that says how to give such a model as a folder (:func:`name_only_pointers`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from conba.constants import POOLINGS

BARE_MODEL_META = "conba.bare_model"  # ctx.meta key: the load_model options --pooling / --trust-remote-code give
POOLING_NAMES = POOLINGS


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


def name_only_pointers(command: str) -> dict[str, str]:
    """The one-line pointers of ``--pooling`` / ``--trust-remote-code`` for a command whose runs record only a
    model's name (``bench speed``, ``distill``, ``prune train``): they are not its options (a
    :class:`conba.cli.moved.PointerCommand` table)."""
    what = f"is not taken by `conba {command}`, which records only the model's name"
    return {"--pooling": f"{what}: save the bare model with its read-out once (python -c \"import conba; "
                         "conba.load_model('NAME', pooling='P').save('DIR')\") and pass -m DIR",
            "--trust-remote-code": f"{what}: it cannot run a model that needs its own code; use such a model with "
                                   "encode, index, search, clones, map, compare, eval, calibrate, eval-repo or serve"}
