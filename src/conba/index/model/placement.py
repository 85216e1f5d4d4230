"""Where an index's model runs: ``--device`` / ``--dtype`` for a model the index may load later.

An :class:`conba.index.Index` loads its model lazily (the one it was built with, unless one is given),
and ``conba clones`` never loads it at all; so the device and dtype are recorded on the index
(``Index.placement``) and applied when the model loads, or at once when it is loaded already. The
model is placed after the index checked its fingerprint; the fingerprint does not depend on the device
or dtype (:mod:`conba.engine.device`), so an index built on a GPU in float16 is used on a CPU in
float32 and the other way round.
"""

from __future__ import annotations

from typing import Any

Placement = tuple[str | None, str | None]  # (device, dtype) names; None: leave the model as loaded


def apply_placement(model: Any, placement: Placement, engine: str) -> Any:
    """``model`` moved to ``placement`` for ``engine`` (in place); (None, None) leaves it."""
    device, dtype = placement
    if device is None and dtype is None:
        return model
    from conba.engine.device import place_model

    return place_model(model, device or "auto", dtype or "auto", engine)


def place_index_model(idx: Any, device: str | None, dtype: str | None) -> None:
    """Run ``idx``'s model on ``device`` in ``dtype``: now when it is loaded, else when it loads."""
    idx.placement = (device, dtype)
    if idx.models.loaded is not None:  # an explicit model is loaded (and checked) when the index opens
        apply_placement(idx.models.loaded, idx.placement, idx.engine)
