"""The research suite's tests: the fixtures shared with the product's tests (tests/helpers/fixtures.py, on
the path through pyproject.toml's pytest ``pythonpath``), which also plug in this suite's commands when it
is on the path but not installed."""

from __future__ import annotations

from helpers.fixtures import (  # noqa: F401
    _private_cache,
    _tiny_model_saved,
    data_dir,
    tiny_backbone,
    tiny_data,
    tiny_model,
)
