"""The model that encodes an index's queries: the ONNX query encoder when it can, else the torch model.

``Index.search`` (so ``conba search``, ``conba serve``, the MCP server) needs one forward pass per query;
loading torch, transformers and the weights for it took most of a cold run. When the index's own model is a
model folder (:func:`conba.utils.model_files.model_folder`) whose export to the query encoder is cached
(:mod:`conba.engine.query_encoder`, key: the folder's files, the index's view and load options), and that
export's embedding fingerprint is the index's, the query is encoded by ONNX Runtime without importing torch.
Its vectors are the torch engine's to float32 rounding (tested: top-10 ids identical, scores within 1e-4).

Otherwise the model loads as before (:meth:`Index.encoding_model`, which checks it), and is then exported
for the next run (:func:`export_for_index`), as is the model ``conba index`` loaded to encode. No fast path
(torch as before) for: a model given to the Index by name or as an object, engines ``onnx`` and
``onnx-fp32`` (their queries keep the index's own engine), a ``--device`` other than the CPU or a ``--dtype``
other than float32, models that cannot be exported (:func:`conba.engine.query_export.exportable`),
``CONBA_QUERY_ENGINE=torch``, or without onnxruntime.
"""

from __future__ import annotations

from typing import Any

from conba.index.model import identity
from conba.utils.io import write_text_atomic
from conba.utils.model_files import model_folder
from conba.utils.status import note

__all__ = ["FAST_ENGINES", "after_add", "export_cached", "export_for_index", "index_key", "model_for_queries",
           "query_model"]
FAST_ENGINES = ("torch",)  # the default engine; onnx / onnx-fp32 indexes encode queries with their own engine
CPU_PLACES = (None, "auto", "cpu")
FLOAT32 = (None, "auto", "float32")
EXPORT_SECONDS = 15  # about what exporting MiniLM takes on 2 busy cores (said in the note)


def index_key(idx: Any, named: bool = False) -> str | None:
    """The query encoder cache key of ``idx``'s own model, or None when it has no fast path; ``named``: also
    for a model named to the Index (``conba index -m NAME``: its model by name, loaded and checked)."""
    from conba.engine.query_encoder import folder_key, wanted

    given = not named and idx.models.name is not None and not bool(idx.models.own)
    if given or idx.models.deferred is not None:
        return None  # a model named to the Index (loaded when it opens), or one kept aside to upgrade
    if idx.engine not in FAST_ENGINES or not wanted():
        return None
    device, dtype = idx.placement
    if device not in CPU_PLACES or dtype not in FLOAT32:
        return None
    name = idx.model_name or "default"
    folder = model_folder(name)
    view = idx.models.view if idx.models.view is not None else idx.db_call(idx.store.get_meta, "view")
    if folder is None or view is None:  # not one folder, or a new index (nothing to search yet)
        return None
    options = idx.db_call(identity.load_options, idx.path, idx.store, idx.models.options, name)
    return folder_key(folder, view, options)


def query_model(idx: Any) -> Any:
    """What encodes ``idx``'s queries (see the module docstring): the cached query encoder whose embedding
    fingerprint is the index's, else the index's checked model (then exported for the next run)."""
    if idx.models.loaded is not None:
        return idx.encoding_model()
    key = index_key(idx)
    name = idx.model_name or "default"
    if key is None:
        note(f"loading model {name} (torch)")
        return idx.encoding_model()
    from conba.engine.query_encoder import load_cached

    encoder = load_cached(key)
    if encoder is not None and encoder.embedding_fingerprint() == idx.db_call(idx.store.get_meta, "fingerprint"):
        return encoder
    note(f"loading model {name} (torch)")
    model = idx.encoding_model()
    export_for_index(idx, model, key)
    return model


def after_add(idx: Any) -> None:
    """``Index.add``: export the model the run loaded by name (to encode, or to check it), so that queries need
    no torch from the next run on; nothing when it was not loaded, or was given to the Index as an object."""
    if idx.models.loaded is not None and idx.models.own is not None:  # loaded by name (conba.index.model.load)
        export_for_index(idx, idx.models.loaded, index_key(idx, named=True))


def export_for_index(idx: Any, model: Any, key: str | None = None) -> bool:
    """Export ``model`` (the index's own, loaded and checked) to the query encoder cache unless it is there;
    True when an export is there afterwards."""
    key = key or index_key(idx)
    if key is None or getattr(model, "embedding_fingerprint", None) is None:
        return False
    if model.embedding_fingerprint() != idx.db_call(idx.store.get_meta, "fingerprint"):
        return False
    return export_cached(model, key, idx.model_name or "default")


def model_for_queries(name: str, view: str | None = None, options: dict[str, Any] | None = None,
                      placement: tuple[str | None, str | None] = (None, None)) -> Any:
    """The model ``name`` (``conba compare``, ``/compare`` without an index) as the cached query encoder when
    it can (see the module docstring; ``view`` overrides its input view), else loaded with torch (then
    exported for the next run) and placed at ``placement`` (device, dtype)."""
    import json

    from conba.engine.query_encoder import folder_key, load_cached, wanted
    from conba.utils.model_files import CONFIG_NAME

    options = {k: v for k, v in (options or {}).items() if v}
    folder = model_folder(name)
    key = None
    if folder is not None and wanted() and placement[0] in CPU_PLACES and placement[1] in FLOAT32:
        try:
            own = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8")).get("view") or "raw"
        except (OSError, ValueError, AttributeError):
            own = None  # loading says what is wrong
        key = folder_key(folder, view or own, options) if own is not None else None
        encoder = load_cached(key) if key is not None else None
        if encoder is not None:
            return encoder
    from conba.model import load_model

    note(f"loading model {name} (torch)")
    model = load_model(name, **options)
    if view is not None:
        model.view = view
    if key is not None:
        export_cached(model, key, name)
    device, dtype = placement
    if device is None and dtype is None:
        return model
    from conba.engine.device import place_model

    return place_model(model, device or "auto", dtype or "auto")


def export_cached(model: Any, key: str, name: str) -> bool:
    """Export ``model`` to the query encoder cache under ``key`` unless it is there; True when an export is
    there afterwards. A model that cannot be exported says why in one note, once."""
    from conba.engine.query_encoder import cache_dir, load_cached

    if load_cached(key) is not None:
        return True
    refused = cache_dir(key).with_name(f"{key}.unexportable")
    if refused.exists():  # tried before: said once, not again
        return False
    from filelock import FileLock

    from conba.engine.query_export import NotExportable, export_query_encoder

    folder = cache_dir(key)
    folder.parent.mkdir(parents=True, exist_ok=True)
    note(f"exporting model {name} to ONNX for torch-free queries (once, ~{EXPORT_SECONDS} s)")
    try:
        with FileLock(str(folder) + ".lock"):  # processes sharing the cache export once
            if load_cached(key) is None:
                export_query_encoder(model, folder)
    except NotExportable as exc:
        note(f"{exc}; queries keep using torch")
        write_text_atomic(refused, str(exc) + "\n")
        return False
    except OSError as exc:  # a read-only or full cache: queries keep using torch
        note(f"cannot write the ONNX query encoder to {folder} ({exc.strerror or exc}); queries keep using torch")
        return False
    except Exception as exc:  # only a shortcut: never fail the run (an index, a search) that made it
        note(f"could not export model {name} to ONNX ({type(exc).__name__}: {exc}); queries keep using torch")
        return False
    return True
