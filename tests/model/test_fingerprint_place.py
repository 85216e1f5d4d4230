"""A bare model folder is the same model wherever it lies: its fingerprint hashes its weights, not its
path (given relative or absolute, moved, or copied to a Ray worker), while other weights still differ."""

from __future__ import annotations

import os
import shutil

from conba.model import load_model
from helpers import make_tiny_backbone


def test_a_moved_or_relative_bare_folder_keeps_its_fingerprint(tiny_backbone, tmp_path, monkeypatch):
    here = load_model(str(tiny_backbone)).embedding_fingerprint()
    moved = shutil.copytree(tiny_backbone, tmp_path / "elsewhere" / "model")
    assert load_model(str(moved)).embedding_fingerprint() == here
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert load_model(os.path.join(".", "model")).embedding_fingerprint() == here


def test_other_weights_in_a_folder_still_give_another_fingerprint(tiny_backbone, tmp_path):
    other = make_tiny_backbone(tmp_path / "other", seed=1)
    assert load_model(str(other)).fingerprint() != load_model(str(tiny_backbone)).fingerprint()
