"""The model of ``Index.add``, loaded only when something is to be encoded.

Loading a model (its weights, transformers, torch) is most of what an incremental ``conba index`` or
``conba map`` over an up-to-date index costs, though nothing is encoded. Its job there is the identity check
(:func:`conba.index.model.identity.check_model`: the model's embedding fingerprint must be the index's). That needs
the weights only once per model folder: after a check passes, the index records a **model stamp**
(:func:`model_stamp`, meta ``model_stamp``): the model's folder (the shipped ``default`` / ``default-fast``, or a
conba model folder), the name, path, size and modification time of each of its files, the input view, the
``load_model`` options and the engine. While the stamp of the model ``add`` would load equals the recorded one,
the files are those whose fingerprint was checked, so ``add`` hands its encoder a :class:`LazyModel` that
loads (and checks) the model on first use, which is only when some unit needs a vector. A changed file, another
model, view, option or engine gives another stamp: the model loads and is checked before any work, as without
stamps. Models that are not one folder (a Hugging Face hub name, ``zero-shot``, ``default-sdtp``) have no stamp
and always load. Loading checks the weights against the fingerprint the folder records, so a stamp never
hides a changed file that kept its size and time from a run that encodes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from conba.index.model import identity
from conba.utils.model_files import CONFIG_NAME, folder_files, model_folder

__all__ = ["LazyModel", "STAMP_META", "add_model", "model_folder", "model_stamp"]
STAMP_META = "model_stamp"


def model_stamp(idx: Any) -> str | None:
    """The stamp of the model ``idx`` (an :class:`~conba.index.Index` without a loaded model) would load: its
    own (see the module docstring); None when it has none, or was given a model by name."""
    if idx.models.name is not None:  # a model named to the Index loads (and is checked) when it opens
        return None
    name = idx.model_name or "default"  # the index's own model, as load_index_model reloads it
    folder = model_folder(name)
    if folder is None:
        return None
    options = idx.db_call(identity.load_options, idx.path, idx.store, idx.models.options, name)
    view = idx.models.view if idx.models.view is not None else idx.db_call(idx.store.get_meta, "view")
    if view is None:  # a new index: the model's own view
        try:
            view = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8")).get("view") or "raw"
        except (OSError, ValueError, AttributeError):
            return None  # loading says what is wrong
    payload = {"folder": str(folder), "view": view, "options": options, "engine": idx.engine,
               "files": folder_files(folder)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


class LazyModel:
    """Stands in for the model of ``idx``: ``view`` without loading, anything else loads (and checks) it."""

    def __init__(self, idx: Any):
        self._idx = idx

    @property
    def view(self) -> str:
        return self._idx.models.view or self._idx.db_call(self._idx.store.get_meta, "view") or "raw"

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._idx.encoding_model(), attr)


def add_model(idx: Any) -> Any:
    """The model ``Index.add`` encodes with: the loaded one (checked, its stamp recorded), or a
    :class:`LazyModel` when the recorded stamp is that of the model it would load."""
    if idx.models.loaded is not None:
        return idx.encoding_model()
    stamp = model_stamp(idx)
    if stamp is not None and stamp == idx.db_call(idx.store.get_meta, STAMP_META):
        return LazyModel(idx)
    model = idx.encoding_model()  # loads and checks the fingerprint before any work
    if stamp is not None:
        try:  # before the write lock, as check_model records a new index's identity; only a shortcut
            idx.store.set_meta(**{STAMP_META: stamp})
        except sqlite3.OperationalError:
            pass  # busy: the next run records it
    return model
