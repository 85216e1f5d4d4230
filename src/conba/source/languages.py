"""The check of a language name given by a user (the CLI and the server answer alike); the languages
themselves (extensions, grammars, view rules) are declared in :mod:`conba.syntax.language_table`."""

from __future__ import annotations

from conba.errors import ConfigError

__all__ = ["known_languages", "check_language"]


def known_languages() -> list[str]:
    """Every language name the model and the index know (the data and the file-extension tables)."""
    from conba.data.records import LANGUAGES
    from conba.syntax.languages import EXTENSIONS

    return sorted(set(LANGUAGES) | set(EXTENSIONS.values()))


def check_language(name: str | None, what: str) -> str | None:
    """The normalised language name (aliases such as ``py`` or ``c++`` accepted), None for none or
    blank, else :class:`ConfigError` naming ``what`` (an option, a field) and the known names."""
    from conba.data.records import normalize_language

    if name is None or not name.strip():
        return None
    lang = normalize_language(name)
    known = known_languages()
    if lang not in known:
        raise ConfigError(f"{what}: unknown language {name!r} (known: {', '.join(known)})")
    return lang
