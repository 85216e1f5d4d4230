"""An index built before its model gained a long-input read-out (a window head, max_windows > 1): `conba index`
re-encodes only the functions longer than one window, keeps every other vector bit for bit, and ends as a clean
build with the new model; readers say so in one line; a model changed under the same name is not "use -m"."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.index import Index, ModelMismatchError
from conba.index.errors import ModelUpgradeError
from helpers import kill_conba_when, sql_count, write_tree

MAX_LENGTH = 32  # tokens per window: the tiny tokenizer's 30 content tokens
QUERIES = ["def add(a, b):\n    return a + b\n", "def walk(xs):\n    y = xs[0] * 3 + 1\n    return y\n"]


def _long(name: str, n: int) -> str:
    return f"def {name}(xs):\n" + "".join(f"    y{i} = xs[{i}] * {i} + {n}\n" for i in range(n)) + "    return y0\n"


def _tree(root: Path) -> Path:
    return write_tree(root, {
        "short.py": "def add(a, b):\n    return a + b\n\n\ndef one():\n    return 1\n",
        "mixed.py": "def neg(x):\n    return -x\n\n\n" + _long("walk", 12) + "\n\n" + _long("scan", 20),
        "pkg/long.py": _long("deep", 30) + "\n\n" + _long("wide", 8),
        "pkg/other.py": "def half(x):\n    return x / 2\n",
    })


def _model_folder(backbone: Path, folder: Path) -> Path:
    from conba.model import ConbaModel

    return ConbaModel.create(str(backbone), max_length=MAX_LENGTH).save(folder)


def _add_read_out(folder: Path, seed: int = 0):
    """The model in ``folder`` with a trained-looking linear window head and max_windows 4, saved over it."""
    from conba.heads.window_head import WindowHeadConfig, build_window_head
    from conba.model import load_model

    model = load_model(str(folder))
    model.max_windows = 4
    torch.manual_seed(seed)
    model.window_head = build_window_head(WindowHeadConfig(reader="linear", dim=model.dim))
    with torch.no_grad():
        model.window_head.linear.weight.add_(0.3 * torch.randn_like(model.window_head.linear.weight))
    model.save(folder)
    return load_model(str(folder))


def _vectors(folder: Path) -> dict[tuple[str, str], np.ndarray]:
    with Index(folder, create=False) as idx:
        units = idx.units()
        stored = idx.store.vectors_of([u.id for u in units])
        return {(Path(u.file).name, u.qualname): stored[u.id].copy() for u in units}


def _file_vectors(folder: Path) -> dict[str, np.ndarray]:
    db = sqlite3.connect(folder / "index.sqlite")
    try:
        return {Path(p).name: np.frombuffer(b, dtype=np.float32) for p, b in db.execute(
            "SELECT path, vector FROM file_vectors")}
    finally:
        db.close()


def _hits(folder: Path) -> list[list[tuple[str, str, float]]]:
    with Index(folder) as idx:
        return [[(Path(h.unit.file).name, h.unit.qualname, h.score) for h in idx.search(q, k=8)] for q in QUERIES]


def _is_long(model, code: str) -> bool:
    """Independently of conba.model.compat: more content tokens than one window holds."""
    return len(model.backbone.tokenizer(code, add_special_tokens=False)["input_ids"]) > MAX_LENGTH - 2


@pytest.fixture()
def upgradable(tmp_path, tiny_backbone):
    """(project, model folder, index built before the read-out, old vectors); the folder now has the read-out."""
    proj = _tree(tmp_path / "proj")
    folder = _model_folder(tiny_backbone, tmp_path / "model")
    idx = tmp_path / "idx"
    result = CliRunner().invoke(cli, ["index", str(proj), "-i", str(idx), "-m", str(folder)])
    assert result.exit_code == 0, result.output
    return proj, folder, idx, _vectors(idx)


@pytest.mark.parametrize("named", [False, True], ids=["own-model", "named-model"])
def test_upgrade_reencodes_only_long_functions_and_equals_a_clean_build(upgradable, tmp_path, monkeypatch, named):
    from conba.model.core import ConbaModel

    proj, folder, idx, before = upgradable
    model = _add_read_out(folder)
    with Index(idx, create=False) as i:
        codes = {(Path(u.file).name, u.qualname): u.code for u in i.units()}
    long = {k for k, code in codes.items() if _is_long(model, code)}
    assert len(long) == 4 and len(codes) - len(long) == 4  # walk, scan, deep, wide: the tree is as meant
    encoded: list[str] = []
    real = ConbaModel.encode

    def counting(self, codes, *args, **kwargs):
        encoded.extend([codes] if isinstance(codes, str) else codes)
        return real(self, codes, *args, **kwargs)

    monkeypatch.setattr(ConbaModel, "encode", counting)
    args = ["index", str(proj), "-i", str(idx)] + (["-m", str(folder)] if named else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Upgraded 4 long functions to the model's long-input read-out (4 encoded" in result.output
    assert "; 4 unchanged" in result.output and "0 functions encoded" in result.output
    assert sorted(encoded) == sorted(codes[k] for k in long)  # the backbone never ran on a short one
    monkeypatch.setattr(ConbaModel, "encode", real)

    after = _vectors(idx)
    assert after.keys() == before.keys()
    for key in before:
        if key in long:
            assert not np.allclose(after[key], before[key], atol=1e-3)
            assert np.allclose(after[key], model.encode(codes[key]), atol=1e-5)
        else:
            assert np.array_equal(after[key], before[key])  # bit for bit
    manifest = json.loads((idx / "manifest.json").read_text())
    assert manifest["fingerprint"] == model.embedding_fingerprint()

    clean = tmp_path / "clean"
    assert CliRunner().invoke(cli, ["index", str(proj), "-i", str(clean), "-m", str(folder)]).exit_code == 0
    for got, want in zip(_hits(idx), _hits(clean)):
        assert [h[:2] for h in got] == [h[:2] for h in want]
        assert np.allclose([h[2] for h in got], [h[2] for h in want], atol=1e-4)
    fv, fv_clean = _file_vectors(idx), _file_vectors(clean)
    assert fv.keys() == fv_clean.keys() == {"short.py", "mixed.py", "long.py", "other.py"}
    for name in fv:
        assert np.allclose(fv[name], fv_clean[name], atol=1e-5), name

    again = CliRunner().invoke(cli, ["index", str(proj), "-i", str(idx)])  # nothing left to upgrade
    assert again.exit_code == 0 and "Upgraded" not in again.output and "0 functions encoded" in again.output


def test_readers_say_what_changed_and_how_many_functions_the_update_reencodes(upgradable, monkeypatch):
    proj, folder, idx, _ = upgradable
    _add_read_out(folder)
    for extra in ([], ["-m", str(folder)]):
        result = CliRunner().invoke(cli, ["search", "--code", QUERIES[0], "-i", str(idx), *extra])
        assert result.exit_code == 1
        line = result.output.strip()
        assert "\n" not in line and "gained a long-input read-out since this index was built" in line
        assert f"`conba index PATHS --index {idx}`" in line and "only the 4 of its 8 functions longer" in line
        assert "use its model" not in line
    from conba.index.model import upgrade_check

    monkeypatch.setattr(upgrade_check, "EXACT_UP_TO", 3)  # a large index: estimated from a sample of contents
    line = CliRunner().invoke(cli, ["search", "--code", QUERIES[0], "-i", str(idx)]).output.strip()
    assert "re-encoding only about " in line and " of its 8 functions (estimated from 3) longer than one" in line
    with Index(idx) as i:  # the API: the model is refused when used, not when the index opens
        with pytest.raises(ModelUpgradeError):
            _ = i.model
    with pytest.raises(ModelUpgradeError):
        with Index(idx, model=str(folder)) as i:
            i.search(QUERIES[0])
    db = sqlite3.connect(idx / "index.sqlite")  # the readers changed nothing
    try:
        state = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('state', 'fingerprint')").fetchall())
    finally:
        db.close()
    assert state["state"] == "ready" and state["fingerprint"] == json.loads((idx / "manifest.json").read_text())[
        "fingerprint"]


def test_serve_refuses_the_new_model_on_an_index_to_upgrade(upgradable):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from conba.serve.app import create_app

    _, folder, idx, _ = upgradable
    _add_read_out(folder)
    with pytest.raises(ModelUpgradeError, match="gained a long-input read-out"):
        create_app(idx)  # the index's own model
    with TestClient(create_app(idx, model=str(folder))) as client:  # a model given: refused per request
        r = client.post("/search", json={"code": QUERIES[0], "k": 3})
    assert r.status_code == 503 and "only the 4 of its 8 functions longer than one window" in r.json()["detail"]


def test_same_model_name_changed_is_not_use_dash_m(upgradable, tiny_backbone, tmp_path):
    from conba.heads import HeadConfig
    from conba.model import ConbaModel

    proj, folder, idx, _ = upgradable
    torch.manual_seed(3)
    ConbaModel.create(str(tiny_backbone), head=HeadConfig(kind="linear"), max_length=MAX_LENGTH).save(folder)
    result = CliRunner().invoke(cli, ["search", "--code", QUERIES[0], "-i", str(idx)])
    assert result.exit_code == 1
    line = result.output.strip()
    assert f"model '{folder}' has changed since this index was built" in line
    assert "use its model" not in line and "-m" not in line.split(";")[-1]
    assert f"`conba index PATHS --index {idx} --rebuild`" in line
    with pytest.raises(ModelMismatchError) as err:  # and `conba index` refuses it (no upgrade of another model)
        with Index(idx) as i:
            i.add([proj])
    assert not isinstance(err.value, ModelUpgradeError)


def test_upgrade_of_an_ivf_index_updates_the_structure_like_a_changed_function(tmp_path, tiny_backbone):
    pytest.importorskip("faiss")
    files = {f"pkg/m{f}.py": "".join(f"def f{f}_{i}(x):\n    return x * {f * 100 + i} - {i}\n\n" for i in range(10))
             for f in range(8)}
    files["pkg/long.py"] = _long("deep", 30) + "\n\n" + _long("wide", 12) + "\n\ndef tail(x):\n    return x\n"
    proj = write_tree(tmp_path / "proj", files)
    folder = _model_folder(tiny_backbone, tmp_path / "model")
    idx, clean = tmp_path / "idx", tmp_path / "clean"
    with Index(idx, model=str(folder), ivf_above=50) as i:
        i.add([proj])
        assert i.manifest()["kind"] == "ivf"
    _add_read_out(folder)
    with Index(idx, ivf_above=50) as i:
        i.add([proj])
        ann = i.manifest()["ann"]
        assert i.upgrade_report.units == 2
    # updated in place, not rebuilt: long.py's 3 units left the lists and came back with new ids
    assert ann["rebuilt_because"] == "first build" and ann["added_since_build"] == ann["removed_since_build"] == 3
    with Index(clean, model=str(folder), ivf_above=50) as i:
        i.add([proj])
    for got, want in zip(_hits(idx), _hits(clean)):
        assert [h[:2] for h in got] == [h[:2] for h in want]


def _meta(idx: Path) -> dict[str, str]:
    db = sqlite3.connect(f"file:{idx / 'index.sqlite'}?mode=ro", uri=True, timeout=5)
    try:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()


def _side_rows(idx: Path) -> int:
    return sql_count(idx / "index.sqlite", "SELECT count(*) FROM upgrade_vectors")


@pytest.mark.slow
def test_killed_upgrade_keeps_the_index_and_a_rerun_finishes_it(upgradable):
    import os

    proj, folder, idx, before = upgradable
    old = _meta(idx)["fingerprint"]
    model = _add_read_out(folder)
    env = dict(os.environ, CONBA_INDEX_COMMIT_EVERY="1", CONBA_INDEX_TEST_DELAY="1")
    kill_conba_when(["index", str(proj), "--index", str(idx)], lambda: _side_rows(idx) >= 1, env, timeout=90,
                    what="the upgrade")
    meta = _meta(idx)  # killed mid-upgrade: the index is as it was, its vectors untouched
    assert meta["fingerprint"] == old and meta["state"] == "ready" and meta["upgrade_target"] != old
    assert all(np.array_equal(v, before[k]) for k, v in _vectors(idx).items())
    kept = _side_rows(idx)
    assert 1 <= kept < 4
    result = CliRunner().invoke(cli, ["index", str(proj), "-i", str(idx)])
    assert result.exit_code == 0, result.output
    assert f"Upgraded 4 long functions to the model's long-input read-out ({4 - kept} encoded" in result.output
    meta = _meta(idx)
    assert meta["fingerprint"] == model.embedding_fingerprint() and "upgrade_target" not in meta
    with Index(idx, create=False) as i:
        codes = {(Path(u.file).name, u.qualname): u.code for u in i.units()}
    for key, vec in _vectors(idx).items():
        if _is_long(model, codes[key]):
            assert np.allclose(vec, model.encode(codes[key]), atol=1e-5)
        else:
            assert np.array_equal(vec, before[key])
    assert _side_rows(idx) == 0
