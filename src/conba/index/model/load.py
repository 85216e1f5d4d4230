"""Loading an index's model by name: the one given, else the one the index was built with, with its view
and the ``load_model`` options a bare model was recorded with (``--pooling``; ``--trust-remote-code`` is
recorded too, but asked again: a model that runs code from its folder is not reloaded without it).

>>> Index("idx", model="BAAI/some-embedder", model_options={"pooling": "cls"})  # recorded with the index
>>> Index("idx").model                                                       # reloaded with pooling cls
"""

from __future__ import annotations

from typing import Any

from conba.index.model import identity
from conba.index.model.placement import apply_placement

__all__ = ["load_index_model"]


def load_index_model(idx: Any) -> Any:
    """The model of the :class:`~conba.index.Index` ``idx``, loaded, checked against the index's vectors
    (:func:`identity.check_model`, which records name, view and options with a new index) and placed
    (``idx.placement``)."""
    from conba.model import load_model

    own = idx.models.name is None  # no model given: the one the index was built with
    name = idx.model_name or "default"
    options = idx.models.options
    if own:
        options = idx.db_call(identity.load_options, idx.path, idx.store, options, name)
    model = load_model(name, **options)
    view = idx.models.view
    if view is None and own:  # the model the index was built with: its view too
        view = idx.db_call(idx.store.get_meta, "view")
    if view is not None:
        model.view = view
    idx.models.name, idx.models.options = name, options  # recorded with a new index, so reports can name it
    idx.models.own = own  # the index's own model, loaded by name (conba.index.model.query exports it)
    idx.check_model(model)
    return apply_placement(model, idx.placement, idx.engine)  # after the float32 check
