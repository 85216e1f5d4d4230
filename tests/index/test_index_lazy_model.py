"""Index.add loads its own model only when something is to be encoded (conba.index.model.lazy), and the
identity check still holds: a changed model folder loads and is checked before any work."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from conba.index import Index
from conba.index.errors import ModelMismatchError
from conba.index.model.lazy import STAMP_META, LazyModel, model_folder, model_stamp


@pytest.fixture()
def project(tmp_path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("def add(a, b):\n    c = a + b\n    return c\n\n\ndef sub(a, b):\n    c = a - b\n"
                              "    return c\n")
    return src


def _loaded(idx: Index) -> bool:
    return idx.models.loaded is not None


def test_shipped_folders_are_the_loaders():
    from conba.model.core import CONFIG_NAME, DEFAULT_FAST_DIR, DEFAULT_MODEL_DIR
    from conba.utils import model_files

    assert model_files.CONFIG_NAME == CONFIG_NAME
    assert model_folder("default") == DEFAULT_MODEL_DIR.resolve()
    assert model_files.SHIPPED_DIRS["default-fast"] == DEFAULT_FAST_DIR.name
    assert model_folder("zero-shot") is None and model_folder("default-sdtp") is None
    assert model_folder("some-org/some-hub-model") is None


def test_an_up_to_date_index_adds_without_loading_its_model(project, tmp_path, tiny_model):
    from conba.model import load_model

    with Index(tmp_path / "idx", model=tiny_model) as idx:  # a named model loads when the index opens
        assert idx.add([project]).units_encoded == 2
        assert idx.store.get_meta(STAMP_META) is None
    with Index(tmp_path / "idx") as idx:  # its own model: loaded and checked once, its stamp recorded
        stamp = model_stamp(idx)
        idx.add([project])
        assert stamp is not None and _loaded(idx) and idx.store.get_meta(STAMP_META) == stamp
    with Index(tmp_path / "idx") as idx:  # nothing to encode: not loaded at all
        report = idx.add([project])
        assert report.units_encoded == 0 and report.view == idx.store.get_meta("view") and not _loaded(idx)
    (project / "b.py").write_text("def mul(a, b):\n    c = a * b\n    return c\n")
    with Index(tmp_path / "idx") as idx:  # something to encode: loaded (and checked) for it
        assert idx.add([project]).units_encoded == 1 and _loaded(idx)
        unit = next(u for u in idx.units() if u.qualname == "mul")
        stored = idx.store.vectors_of([unit.id])[unit.id]
    want = load_model(tiny_model).encode([unit.code], languages=["python"], normalize=True)[0]
    assert np.allclose(stored, want, atol=1e-5)  # the lazily loaded model's vector, as an eager one's


def test_a_changed_model_folder_loads_and_is_checked(project, tmp_path, tiny_model, tiny_backbone):
    import shutil

    from conba.model import ConbaModel

    folder = tmp_path / "model"
    shutil.copytree(tiny_model, folder)
    with Index(tmp_path / "idx", model=str(folder)) as idx:
        idx.add([project])
    with Index(tmp_path / "idx") as idx:
        idx.add([project])  # records the stamp
    config = folder / "conba_config.json"
    st = config.stat()
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # touched: another stamp
    with Index(tmp_path / "idx") as idx:
        idx.add([project])
        assert _loaded(idx)  # same weights: the check passes, the new stamp is recorded
    with Index(tmp_path / "idx") as idx:
        idx.add([project])
        assert not _loaded(idx)
    # another model saved over the folder: its stamp differs, so it loads, and the fingerprint check refuses it
    shutil.rmtree(folder)
    ConbaModel.create(str(tiny_backbone), max_length=32).save(folder)
    with Index(tmp_path / "idx") as idx, pytest.raises(ModelMismatchError, match="has changed since this index"):
        idx.add([project])


def test_lazy_model_loads_on_first_use(project, tmp_path, tiny_model):
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
    with Index(tmp_path / "idx") as idx:
        lazy = LazyModel(idx)
        assert lazy.view == (idx.store.get_meta("view") or "raw") and not _loaded(idx)
        assert lazy.dim == idx.model.dim and _loaded(idx)


def test_conba_map_on_an_up_to_date_index_loads_no_model(project, tmp_path, tiny_model, monkeypatch):
    from click.testing import CliRunner

    import conba.model.loading
    from conba.cli.main import cli

    other = tmp_path / "port"
    other.mkdir()
    (other / "b.py").write_text("def plus(x, y):\n    z = x + y\n    return z\n")
    args = ["map", str(project), str(other), "-i", str(tmp_path / "idx")]
    first = CliRunner().invoke(cli, args + ["-m", tiny_model])  # builds the index
    assert first.exit_code == 0, first.output
    assert CliRunner().invoke(cli, args).exit_code == 0  # its own model: checked once, stamp recorded

    def refuse(*a, **k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(conba.model.loading, "_load_model", refuse)
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert "plus" in again.stdout
    (other / "c.py").write_text("def minus(x, y):\n    return x - y\n")  # something to encode: it loads
    assert "the model was loaded" in repr(CliRunner().invoke(cli, args).exception)


def test_conba_index_json_on_an_up_to_date_index_loads_no_model(project, tmp_path, tiny_model, monkeypatch):
    """The JSON summary names the device only when the run loaded the model (it used to load it to say so)."""
    import json

    from click.testing import CliRunner

    import conba.model.loading
    from conba.cli.main import cli

    args = ["index", str(project), "-i", str(tmp_path / "idx"), "--format", "json"]
    first = CliRunner().invoke(cli, args + ["-m", tiny_model])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["device"] == "cpu"  # loaded to encode
    assert CliRunner().invoke(cli, args).exit_code == 0  # its own model: checked once, stamp recorded

    def refuse(*a, **k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(conba.model.loading, "_load_model", refuse)
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["units_encoded"] == 0 and "device" not in report


def test_status_notes_go_to_stderr_when_asked(monkeypatch, capsys):
    from conba.utils.status import note

    monkeypatch.setenv("CONBA_STATUS", "1")
    note("loading model default (torch)")
    monkeypatch.setenv("CONBA_STATUS", "0")
    note("not shown")
    captured = capsys.readouterr()
    assert captured.err == "conba: loading model default (torch)\n" and captured.out == ""
