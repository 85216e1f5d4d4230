"""The pytest fixtures shared by tests/ and research/tests/ (each conftest.py imports them): a private
feature cache, the tiny backbone and model, tiny grouped data files. Importing it plugs the research suite's
commands in when research/src is on the path but not installed (:func:`helpers.plug_in_research`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers import plug_in_research

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
RESEARCH_PLUGGED_IN = plug_in_research()  # conba experiment / the developer benchmarks, as CI installs them


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Tests never read or fill the user's cache (~/.cache/conba): feature caches, ONNX exports."""
    old = os.environ.get("CONBA_CACHE")
    os.environ["CONBA_CACHE"] = str(tmp_path_factory.mktemp("conba-cache"))
    yield
    if old is None:
        os.environ.pop("CONBA_CACHE", None)
    else:
        os.environ["CONBA_CACHE"] = old


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory) -> Path:
    from helpers import make_tiny_backbone

    return make_tiny_backbone(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def _tiny_model_saved(tiny_backbone, tmp_path_factory) -> Path:
    """The tiny model saved once: the same folder in every module (its weights are the backbone's, no draw)."""
    from conba.model import ConbaModel

    return Path(ConbaModel.create(str(tiny_backbone), max_length=64).save(tmp_path_factory.mktemp("tiny-model")))


@pytest.fixture(scope="module")
def tiny_model(_tiny_model_saved, tmp_path_factory) -> str:
    """A saved conba model folder (tiny backbone, default head, 64-token cap); one per test module, a copy of
    the session's (a test may change its folder; a copy costs milliseconds, building and saving ~0.2 s)."""
    folder = tmp_path_factory.mktemp("m")
    shutil.copytree(_tiny_model_saved, folder, dirs_exist_ok=True, copy_function=shutil.copy)
    return str(folder)


@pytest.fixture()
def tiny_data(tmp_path) -> tuple[Path, Path]:
    from helpers import make_tiny_dataset

    return make_tiny_dataset(tmp_path / "train.jsonl", copies=3), make_tiny_dataset(tmp_path / "dev.jsonl")


@pytest.fixture()
def data_dir(tmp_path) -> Path:
    """A folder with tiny grouped tiny_train.jsonl / tiny_dev.jsonl (the experiment commands' --data)."""
    from helpers import make_tiny_dataset

    d = tmp_path / "data"
    d.mkdir()
    make_tiny_dataset(d / "tiny_train.jsonl", copies=2)
    make_tiny_dataset(d / "tiny_dev.jsonl")
    return d
