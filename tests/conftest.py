"""The product's tests: the shared fixtures (tests/helpers/fixtures.py)."""

from __future__ import annotations

from helpers.fixtures import _private_cache, data_dir, tiny_backbone, tiny_data, tiny_model  # noqa: F401
