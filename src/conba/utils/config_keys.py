"""Config dataclasses as JSON: one base for every config conba saves (backbone, head, SDTP, training,
pretraining, experiments). Loading is strict: an unknown key is a one-line :class:`ConfigError`
naming the key and the file, never silently dropped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, ClassVar

from conba.errors import ConfigError
from conba.utils.io import read_json, write_json_atomic


def known_keys(cls: type, data: Mapping[str, Any], what: str, source: str | Path | None = None) -> dict[str, Any]:
    """``dict(data)`` after checking every key is a field of dataclass ``cls``.

    Raises ConfigError("unknown {what} key 'x' in FILE (known: ...)") naming the unexpected keys."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{what}{_in(source)} must be a mapping (a JSON object), got {type(data).__name__}")
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(known))
    if unknown:
        keys = ", ".join(repr(k) for k in unknown)
        raise ConfigError(f"unknown {what} key{'s' if len(unknown) > 1 else ''} {keys}{_in(source)} "
                          f"(known: {', '.join(known)})")
    return dict(data)


def _in(source: str | Path | None) -> str:
    return f" in {source}" if source else ""


class JsonConfig:
    """Mixin for config dataclasses: ``to_dict`` / ``from_dict`` (strict) / ``save`` / ``load``.

    Subclasses set ``config_name`` (the name in errors) and may override :meth:`upgrade` (fill in keys
    added since a config was saved, with their legacy meaning) and :meth:`checked` (validate or
    normalise after loading; default: ``validate()`` is *not* called, since some configs are
    completed later).
    """

    config_name: ClassVar[str] = "config"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def checked(self):
        return self

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | Path | None = None):
        """Build from a dict; ``source`` (the file it came from) is named in errors."""
        d = known_keys(cls, data, cls.config_name, source)
        try:
            return cls(**cls.upgrade(d)).checked()
        except ConfigError as exc:
            if source is None:
                raise
            raise ConfigError(f"{exc}{_in(source)}") from None

    def save(self, path: str | Path) -> Path:
        write_json_atomic(path, self.to_dict())
        return Path(path)

    @classmethod
    def load(cls, path: str | Path):
        """Read ``path`` (FileNotFoundError / FormatError name it) and :meth:`from_dict` it."""
        return cls.from_dict(read_json(path), source=path)
