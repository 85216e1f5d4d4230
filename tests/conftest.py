"""The product's tests: the shared fixtures (tests/helpers/fixtures.py)."""

from __future__ import annotations

from helpers.fixtures import (  # noqa: F401
    _private_cache,
    _tiny_model_saved,
    data_dir,
    tiny_backbone,
    tiny_data,
    tiny_model,
)
