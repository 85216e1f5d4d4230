"""Crash-safe folder replacement: a process killed between the two renames of a swap still leaves the
previous folder loadable (the best model, a checkpoint, a full backbone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conba.utils.io import existing_dir, replace_dir


class Killed(BaseException):
    """Stands for the process dying (not an Exception: nothing cleans up after it)."""


def _kill_on_rename(monkeypatch: pytest.MonkeyPatch, nth: int) -> None:
    """``os.replace`` works ``nth - 1`` times, then the process "dies" on the ``nth``."""
    real, calls = os.replace, []

    def replace(src, dst, *args, **kwargs):
        calls.append((src, dst))
        if len(calls) == nth:
            raise Killed(f"killed before renaming {src} -> {dst}")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def _folder(path: Path, text: str) -> Path:
    path.mkdir(parents=True)
    (path / "weights").write_text(text)
    return path


def test_replace_dir_swaps_and_cleans_up(tmp_path):
    dst = _folder(tmp_path / "best", "old")
    replace_dir(_folder(tmp_path / "best.tmp", "new"), dst)
    assert (dst / "weights").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]
    replace_dir(_folder(tmp_path / "fresh.tmp", "first"), tmp_path / "fresh")  # no dst yet
    assert (tmp_path / "fresh" / "weights").read_text() == "first"


def test_a_kill_between_the_renames_keeps_the_old_folder(tmp_path, monkeypatch):
    dst = _folder(tmp_path / "best", "old")
    _kill_on_rename(monkeypatch, 2)  # best -> best.old done, best.tmp -> best not
    with pytest.raises(Killed):
        replace_dir(_folder(tmp_path / "best.tmp", "new"), dst)
    monkeypatch.undo()
    assert not dst.exists() and (existing_dir(dst) / "weights").read_text() == "old"
    replace_dir(_folder(tmp_path / "next.tmp", "newer"), dst)  # the next save completes the swap
    assert (dst / "weights").read_text() == "newer" and not (tmp_path / "best.old").exists()


def test_a_second_crash_keeps_the_old_folder_too(tmp_path, monkeypatch):
    dst = tmp_path / "best"
    _folder(tmp_path / "best.old", "old")  # an earlier crash left only best.old
    _kill_on_rename(monkeypatch, 1)
    with pytest.raises(Killed):
        replace_dir(_folder(tmp_path / "best.tmp", "new"), dst)
    monkeypatch.undo()
    assert (existing_dir(dst) / "weights").read_text() == "old"


def test_the_previous_best_model_still_loads_after_a_kill(tiny_model, tmp_path, monkeypatch):
    from conba.model import ConbaModel, load_model

    best = tmp_path / "run" / "best"
    previous = load_model(tiny_model)
    previous.save(best)
    fingerprint = load_model(str(best)).fingerprint()
    newer = load_model(tiny_model)
    newer.threshold = 0.42
    newer.save(tmp_path / "run" / "best.tmp")
    _kill_on_rename(monkeypatch, 2)
    with pytest.raises(Killed):
        replace_dir(tmp_path / "run" / "best.tmp", best)
    monkeypatch.undo()
    assert not best.exists()
    for loaded in (load_model(str(best)), ConbaModel.load(best)):
        assert loaded.fingerprint() == fingerprint and loaded.threshold != 0.42


def test_the_trainer_saves_best_through_replace_dir(monkeypatch, tmp_path):
    """The four savers use the helper (no rmtree-then-rename left)."""
    root = Path(__file__).resolve().parents[2] / "src" / "conba"
    for rel in ("train/trainer.py", "train/distill.py", "model/persist.py", "train/checkpoint.py"):
        text = (root / rel).read_text(encoding="utf-8")
        assert "replace_dir(" in text, rel
        assert ".replace(self.run_dir" not in text and 'tmp.replace(self.out / "best")' not in text, rel
