"""The old Python names of a ConbaModel's long-input settings, still accepted with a DeprecationWarning.

A long snippet is cut into *windows* (the code once said chunks and fragments): ``max_chunks`` is now
``max_windows`` (attribute and ``encode()`` keyword) and ``fragment_head`` is now ``window_head``. The saved
files keep the old names (``max_chunks`` in ``conba_config.json``, the ``fragment_head/`` folder:
:mod:`conba.model.persist`).
"""

from __future__ import annotations

import warnings
from typing import Any

RENAMED: dict[str, str] = {"max_chunks": "max_windows", "fragment_head": "window_head"}


def renamed(old: str, value: Any, new_value: Any = None, stacklevel: int = 3) -> Any:
    """``value``, passed under the old name ``old`` (one-line DeprecationWarning naming the new one);
    ValueError when the new name got another value too."""
    new = RENAMED[old]
    warnings.warn(f"{old} is now {new}", DeprecationWarning, stacklevel=stacklevel)
    if new_value is not None and new_value != value:
        raise ValueError(f"{old} is the old name of {new}: pass {new} only")
    return value


class OldNames:
    """Mixin for ConbaModel: ``model.max_chunks`` and ``model.fragment_head`` read and set the new attributes."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in RENAMED:  # before nn.Module files a head under its old name as another submodule
            warnings.warn(f"{name} is now {RENAMED[name]}", DeprecationWarning, stacklevel=2)
            name = RENAMED[name]
        super().__setattr__(name, value)

    @property
    def max_chunks(self) -> int | None:
        return renamed("max_chunks", self.max_windows)  # type: ignore[attr-defined]

    @property
    def fragment_head(self) -> Any:
        return renamed("fragment_head", self.window_head)  # type: ignore[attr-defined]
