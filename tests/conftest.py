from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory) -> Path:
    from conba.testing import make_tiny_backbone

    return make_tiny_backbone(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture()
def tiny_data(tmp_path) -> tuple[Path, Path]:
    from conba.testing import make_tiny_dataset

    return make_tiny_dataset(tmp_path / "train.jsonl", copies=3), make_tiny_dataset(tmp_path / "dev.jsonl")
