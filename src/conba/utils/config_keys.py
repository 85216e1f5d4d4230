"""Config dataclasses as JSON: one base for every config conba saves (backbone, head, SDTP, training,
pretraining, experiments). Loading is strict: an unknown key is a one-line :class:`ConfigError`
naming the key and the file, never silently dropped."""

from __future__ import annotations

import json
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


# The scalar annotations a saved config can hold, and what JSON value each accepts (a bool is not a number
# here, an int is a float); other annotations (dicts, lists, unions of several types) are left to ``checked``.
_SCALARS: dict[str, tuple[str, Any]] = {
    "int": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "float": ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "str": ("a string", lambda v: isinstance(v, str)),
}


def check_scalar_types(cls: type, data: Mapping[str, Any], what: str, source: str | Path | None = None) -> None:
    """ConfigError("{what} field 'max_length' must be an integer, got \"x\" in FILE") for a value of the wrong
    JSON type in a field annotated ``int``, ``float``, ``bool`` or ``str`` (``| None``: null allowed too)."""
    for f in fields(cls):
        if f.name not in data:
            continue
        kind = str(f.type).replace(" ", "")
        optional = kind.endswith("|None")
        name, test = _SCALARS.get(kind.removesuffix("|None"), (None, None))
        value = data[f.name]
        if test is None or (optional and value is None) or test(value):
            continue
        shown = json.dumps(value) if not isinstance(value, (dict, list)) else type(value).__name__
        raise ConfigError(f"{what} field '{f.name}' must be {name}{' or null' if optional else ''}, got {shown}"
                          f"{_in(source)}")


def _in(source: str | Path | None) -> str:
    return f" in {source}" if source else ""


class JsonConfig:
    """Mixin for config dataclasses: ``to_dict`` / ``from_dict`` (strict) / ``save`` / ``load``.

    Subclasses set ``config_name`` (the name in errors) and may override :meth:`upgrade` (fill in keys
    added since a config was saved, with their legacy meaning) and :meth:`checked` (validate or
    normalise after loading; default: ``validate()`` is *not* called, since some configs are
    completed later). ``file_keys`` maps a field to the name the file holds it under when the two differ (a
    field renamed in the code while saved files keep their key): written under that name, read under either,
    both at once a one-line error.
    """

    config_name: ClassVar[str] = "config"
    file_keys: ClassVar[dict[str, str]] = {}

    def to_dict(self) -> dict[str, Any]:
        return {self.file_keys.get(k, k): v for k, v in asdict(self).items()}  # type: ignore[call-overload]

    @classmethod
    def _field_names(cls, data: Any, source: str | Path | None) -> Any:
        """``data`` with the keys of :attr:`file_keys` under their field names."""
        if not cls.file_keys or not isinstance(data, Mapping):
            return data
        d = dict(data)
        for name, key in cls.file_keys.items():
            if key in d:
                if name in d:
                    raise ConfigError(f"{cls.config_name} has both {name!r} and its file-format name {key!r}"
                                      f"{_in(source)}: keep one")
                d[name] = d.pop(key)
        return d

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def checked(self):
        return self

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | Path | None = None):
        """Build from a dict; ``source`` (the file it came from) is named in errors."""
        d = known_keys(cls, cls._field_names(data, source), cls.config_name, source)
        try:
            d = cls.upgrade(d)
            check_scalar_types(cls, d, cls.config_name)
            return cls(**d).checked()
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
