"""What an :class:`~conba.index.Index` knows of its model, shared with the modules that load, check and upgrade it.

The Index owns one :class:`ModelState` (``Index.models``); :mod:`conba.index.model.load`,
:mod:`~conba.index.model.lazy`, :mod:`~conba.index.model.query`, :mod:`~conba.index.model.placement` and
:mod:`~conba.index.model.upgrade` read and update it through that attribute, never through the Index's private
state (tests/index/test_index_private_state.py checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelState:
    """``name``: the model named to the Index (None: the index's own, loaded by the name it records);
    ``options``: ``load_model``'s options (pooling, trust_remote_code); ``view``: the input view asked for (None:
    the model's or the index's); ``loaded``: the model object once loaded or given (None until then);
    ``own``: set when a model was loaded by name: True when it is the index's own (None: none loaded by name);
    ``deferred``: a model kept aside to upgrade the index (:mod:`conba.index.model.upgrade`); ``upgrading``:
    ``Index.add`` is asking for its model, so an upgradable index is upgraded rather than refused."""

    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    view: str | None = None
    loaded: Any = None
    own: bool | None = None
    deferred: Any = None
    upgrading: bool = False
