"""Installed package versions, from the packages' metadata (``importlib.metadata``): no import of
the package itself, and one source of truth for conba's own version (pyproject.toml)."""

from __future__ import annotations

from importlib import metadata


def package_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (a PyPI name such as "sentence-transformers"), or None."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
