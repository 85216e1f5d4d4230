"""What an index's vectors are: the model's embedding fingerprint, its input view, and the inference
engine that computed them. Vectors of two models, views or engines never mix in one index.

The identity is kept in the ``meta`` table (and copied into ``manifest.json``) when the first model is
checked against a new index. The engine (``torch``, ``onnx`` int8, ``onnx-fp32``) is not part of the
model's fingerprint, since one model gives slightly different vectors per engine (int8 ONNX: cosine
~0.998 to torch), so it is recorded beside it. An index written before the engine was recorded has
torch vectors: it reads as ``torch``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conba.clones.threshold import model_clone_threshold
from conba.errors import ConfigError
from conba.index.errors import EngineMismatchError, ModelMismatchError
from conba.index.storage.store import Store

DEFAULT_ENGINE = "torch"  # a new index's engine, and that of an index made before engines were recorded
FORMAT_VERSION = 1
LOAD_OPTIONS = ("pooling", "trust_remote_code")  # load_model options a bare model is recorded with


def failure_reason(exc: BaseException) -> str:
    """One line saying why an indexing run failed (the error's own message names the file at fault)."""
    from conba.errors import ConbaError

    if isinstance(exc, ConbaError):
        text = str(exc)
    elif isinstance(exc, OSError) and exc.filename is not None:
        text = f"{os.fsdecode(exc.filename)}: {exc.strerror or exc}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def model_label(model: Any) -> str | None:
    """What to store as the model's name: an absolute path for folders, else the name as given."""
    if not isinstance(model, (str, os.PathLike)):
        return None
    return os.path.abspath(model) if os.path.exists(model) else str(model)


def check_engine(engine: str) -> str:
    """``engine`` if it is one of :data:`conba.engine.ENGINES`, else a one-line :class:`ConfigError`."""
    from conba.engine import ENGINES  # imports torch: only when an engine is named

    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r} (choose one of {', '.join(ENGINES)})")
    return engine


def stored_engine(store: Store) -> str | None:
    """The engine the index's vectors come from; None while no model has been recorded (a new index)."""
    engine = store.get_meta("engine")
    if engine is None and store.get_meta("fingerprint") is not None:
        return DEFAULT_ENGINE  # written before the engine was recorded
    return engine


def check_engine_matches(path: Path, store: Store, engine: str) -> None:
    """Raise :class:`EngineMismatchError` when the index at ``path`` holds another engine's vectors."""
    built = stored_engine(store)
    if built is not None and built != engine:
        raise EngineMismatchError(
            f"{path}: index was built with engine {built}, not {engine} (the vectors of two engines must not "
            f"mix); pass --engine {built}, or index into a new folder, or re-index with `conba index --rebuild`")


def require_engine(model: Any, engine: str) -> None:
    """Fail in one line, before any work, when ``model`` cannot run on ``engine``."""
    if engine == "torch":
        return
    from conba.engine.onnx_export import require_onnx

    require_onnx()
    head = getattr(model, "head", None)
    if head is not None and getattr(head, "prefix", None) is not None:
        raise ConfigError(f"engine {engine} cannot run a model with prefix control codes (head code_mode "
                          f"{head.config.code_mode!r}); index with --engine torch")


def model_flags(options: dict[str, Any]) -> str:
    """The command-line flags that give ``load_model`` these ``options`` (" --pooling cls --trust-remote-code")."""
    flags = f" --pooling {options['pooling']}" if options.get("pooling") else ""
    return flags + (" --trust-remote-code" if options.get("trust_remote_code") else "")


def stored_options(store: Store) -> dict[str, Any]:
    """The ``load_model`` options (pooling, trust_remote_code) the index's model was loaded with ({}: none)."""
    try:
        options = json.loads(store.get_meta("model_options") or "{}")
    except ValueError:
        return {}
    return {k: v for k, v in options.items() if k in LOAD_OPTIONS and v} if isinstance(options, dict) else {}


def load_options(path: Path, store: Store, given: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``load_model`` options to reload the index's own model ``name``: those recorded with it, with
    ``given`` (this command's --pooling) on top; one that ran remote code needs ``--trust-remote-code``
    again (:class:`ConfigError` otherwise)."""
    recorded = stored_options(store)
    if recorded.get("trust_remote_code") and not given.get("trust_remote_code"):
        raise ConfigError(f"{path}: index was built with model '{name}', which runs code from its folder; "
                          "pass --trust-remote-code if you trust it")
    return {**recorded, **{k: v for k, v in given.items() if v}}


def check_model(path: Path, store: Store, model: Any, model_name: str | None, engine: str,
                options: dict[str, Any] | None = None) -> None:
    """Record the identity of ``model``'s vectors in a new index (with the ``load_model`` ``options`` of a
    bare model: pooling, trust_remote_code), or check it against an existing one
    (:class:`ModelMismatchError` naming both models and views, and the fix)."""
    fingerprint = model.embedding_fingerprint()  # a pruned model's vectors differ from the exact ones
    stored = store.get_meta("fingerprint")
    calibrated = getattr(model, "clone_threshold", None)
    clone_t = None if not calibrated else str(model_clone_threshold(model))
    if stored is None:
        store.set_meta(fingerprint=fingerprint, model=model_name, dim=str(model.dim),
                       threshold=None if model.threshold is None else str(model.threshold),
                       view=getattr(model, "view", "raw"), clone_threshold=clone_t, engine=engine,
                       format_version=str(FORMAT_VERSION), model_options=_options_json(options))
    elif stored == fingerprint:
        if clone_t is not None and store.get_meta("clone_threshold") != clone_t:
            store.set_meta(clone_threshold=clone_t)  # the model was calibrated since
    else:
        from conba.index.model.upgrade_check import check_upgradable, same_model_changed

        check_upgradable(path, store, model, model_name)  # the model gained a long-input read-out: an upgrade
        built = store.get_meta("model")
        built_view = store.get_meta("view") or "raw"
        using, using_view = model_name or "the given model", getattr(model, "view", "raw")
        if built and built == model_name and built_view == using_view and stored_options(store) == {
                k: v for k, v in (options or {}).items() if k in LOAD_OPTIONS and v}:  # 'default' after an upgrade
            raise ModelMismatchError(same_model_changed(path, built, stored, fingerprint))
        view = f" with view {built_view}" if built_view != using_view else ""
        fix = (f"use its model (-m {built}{model_flags(stored_options(store))}){view} or no -m at all (the index's own "
               f"model and view are the default), or ") if built else ""
        raise ModelMismatchError(
            f"{path}: index was built with {f'model {built!r}' if built else 'a model given as an object'}, view "
            f"{built_view} (fingerprint {stored}), not '{using}', view {using_view} ({fingerprint}); {fix}re-index "
            "with `conba index --rebuild`")


def _options_json(options: dict[str, Any] | None) -> str | None:
    kept = {k: v for k, v in (options or {}).items() if k in LOAD_OPTIONS and v}
    return json.dumps(kept, sort_keys=True) if kept else None
