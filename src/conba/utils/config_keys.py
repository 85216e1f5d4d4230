"""Config dataclasses as JSON: strict loading (an unknown key is an error, not ignored), save / load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, ClassVar

from conba.errors import ConfigError
from conba.utils.io import read_json, write_json_atomic


def known_keys(cls: type, data: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``dict(data)`` after checking every key is a field of dataclass ``cls``.

    Raises ValueError("unknown {what} keys: [...]") naming the unexpected keys."""
    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise ConfigError(f"unknown {what} keys: {sorted(unknown)}")
    return dict(data)


class JsonConfig:
    """Mixin for config dataclasses kept as one JSON file: to_dict / from_dict (strict) / save / load.
    Subclasses set ``config_name`` (used in the unknown-key error)."""

    config_name: ClassVar[str] = "config"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        return cls(**known_keys(cls, data, cls.config_name))

    def save(self, path: str | Path) -> None:
        write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path):
        return cls.from_dict(read_json(path))
