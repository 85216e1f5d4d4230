"""Strict loading of config dataclasses from JSON dicts: an unknown key is an error, not ignored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def known_keys(cls: type, data: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``dict(data)`` after checking every key is a field of dataclass ``cls``.

    Raises ValueError("unknown {what} keys: [...]") naming the unexpected keys."""
    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"unknown {what} keys: {sorted(unknown)}")
    return dict(data)
