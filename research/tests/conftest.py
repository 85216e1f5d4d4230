"""The research suite's tests: the fixtures shared with the product's tests (tests/helpers/fixtures.py, on
the path through pyproject.toml's pytest ``pythonpath``), which also plug in this suite's commands when it
is on the path but not installed."""

from __future__ import annotations

from helpers.fixtures import _private_cache, data_dir, tiny_backbone, tiny_data, tiny_model  # noqa: F401
