"""The input view in the model, the index, training and the CLI (tiny model, no real weights)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.index import Index, ModelMismatchError
from conba.model import CONFIG_NAME, ModelError, load_model
from conba.syntax import apply_view
from helpers import train_config

SNIPPET = '''"""Module."""
import sys


def gcd(a, b):
    """Greatest common divisor."""
    while b:
        a, b = b, a % b  # step
    return a


def unused(x):
    return x


print(gcd(int(sys.argv[1]), 6))
'''


def test_save_load_round_trip_and_old_folders(tiny_model, tmp_path):
    model = load_model(tiny_model)
    assert model.view == "raw"  # the fixture is saved without a view override
    model.view = "code+docs"
    model.save(tmp_path / "m")
    config = json.loads((tmp_path / "m" / CONFIG_NAME).read_text())
    assert config["view"] == "code+docs" and load_model(tmp_path / "m").view == "code+docs"
    del config["view"]  # a folder saved before views existed behaves as before
    (tmp_path / "m" / CONFIG_NAME).write_text(json.dumps(config))
    assert load_model(tmp_path / "m").view == "raw"
    config["view"] = "ast"
    (tmp_path / "m" / CONFIG_NAME).write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"conba_config.json: unknown input view 'ast' \(valid: raw, code"):
        load_model(tmp_path / "m")


def test_fingerprints(tiny_model):
    model = load_model(tiny_model)
    raw_fp, weights_fp = model.embedding_fingerprint(), model.fingerprint()
    assert raw_fp == weights_fp  # raw: as before views existed (old indexes stay valid)
    model.view = "code"
    code_fp = model.embedding_fingerprint()
    model.view = "code+docs"
    assert len({raw_fp, code_fp, model.embedding_fingerprint()}) == 3
    assert model.fingerprint() == weights_fp


@pytest.mark.slow
def test_encode_applies_the_view(tiny_model):
    model = load_model(tiny_model)
    viewed = apply_view(SNIPPET, "python", "code")
    assert "unused" not in viewed
    raw = model.encode([SNIPPET], languages=["python"])
    by_arg = model.encode([SNIPPET], languages=["python"], view="code")
    expected = model.encode([viewed], languages=["python"])
    np.testing.assert_allclose(by_arg, expected, atol=1e-6)
    assert not np.allclose(raw, expected, atol=1e-4)
    model.view = "code"
    np.testing.assert_allclose(model.encode([SNIPPET], languages=["python"]), expected, atol=1e-6)
    np.testing.assert_allclose(model.encode([SNIPPET], languages=["python"], view="raw"), raw, atol=1e-6)
    with pytest.raises(ValueError, match="valid views"):
        model.encode([SNIPPET], languages=["python"], view="bogus")


def _project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(SNIPPET)
    (src / "M.java").write_text("// c\nclass M {\n  int f(int a) {\n    return a + 1;\n  }\n}\n")
    (src / "notes.lua").write_text("-- lua has no grammar: raw\nlocal x = 1\nprint(x)\n")
    return src


def test_index_refuses_a_model_with_another_view(tiny_model, tmp_path):
    src, folder = _project(tmp_path), tmp_path / "idx"
    with Index(folder, model=tiny_model, view="code") as idx:
        report = idx.add([src])
        assert report.view == "code" and report.view_fallbacks == 1  # the lua file
        assert idx.manifest()["view"] == "code" and idx.stats()["view"] == "code"
    with pytest.raises(ModelMismatchError, match="view code .* view raw .*with view code or no -m"):
        Index(folder, model=tiny_model)
    with Index(folder) as idx:  # no model named: the one the index was built with, with its view
        assert idx.model.view == "code"
        assert idx.search("def gcd(a, b):\n    return a\n", k=1, query_language="python")


@pytest.mark.slow
def test_cli_view_option(tiny_model, tmp_path):
    src = _project(tmp_path)
    runner = CliRunner()
    raw = runner.invoke(cli, ["encode", str(src / "m.py"), "-m", tiny_model])
    code = runner.invoke(cli, ["encode", str(src / "m.py"), "-m", tiny_model, "--view", "code"])
    assert raw.exit_code == 0 and code.exit_code == 0, raw.output + code.output
    assert json.loads(raw.output)["language"] == "python"  # from the extension
    assert json.loads(raw.output)["embedding"] != json.loads(code.output)["embedding"]
    bad = runner.invoke(cli, ["encode", str(src / "m.py"), "-m", tiny_model, "--view", "ast"])
    assert bad.exit_code != 0 and "'ast' is not one of 'raw', 'code', 'code+docs'" in bad.output
    cmp = runner.invoke(cli, ["compare", str(src / "m.py"), str(src / "M.java"), "-m", tiny_model,
                              "--view", "code", "--json"])
    assert cmp.exit_code == 0 and "score" in json.loads(cmp.output), cmp.output
    idx = runner.invoke(cli, ["index", str(src), "-i", str(tmp_path / "idx"), "-m", tiny_model, "--view", "code"])
    assert idx.exit_code == 0 and "View code: 1 of 4 encoded functions fell back to raw" in idx.output, idx.output
    query = ["search", "--code", "def g(a):\n    return a\n", "--query-language", "python", "-i", str(tmp_path / "idx")]
    assert runner.invoke(cli, query).exit_code == 0  # the index's own model and view
    assert runner.invoke(cli, [*query, "-m", tiny_model, "--view", "code"]).exit_code == 0
    other = runner.invoke(cli, [*query, "-m", tiny_model])
    assert other.exit_code != 0 and "with view code" in other.output
    for command in ("encode", "compare", "eval", "index", "train", "search"):
        assert "--view [raw|code|code+docs]" in runner.invoke(cli, [command, "--help"]).output


def test_cli_eval_with_view(tiny_model, tiny_data, tmp_path):
    _, dev = tiny_data
    out = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["eval", str(dev), "-m", tiny_model, "--view", "code", "--no-tfidf",
                                      "-j", str(out)])
    assert result.exit_code == 0 and "view code" in result.output, result.output
    assert json.loads(out.read_text())["view"] == "code"


@pytest.mark.slow
def test_train_with_view_saves_it(tiny_backbone, tiny_data, tmp_path):
    from conba.train.config import TrainConfig

    train, _ = tiny_data
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["train", str(train), "-o", str(out), "--backbone", str(tiny_backbone),
                                      "-P", "2", "-K", "3", "-e", "1",
                                      "--config", train_config(tmp_path, cache_dir=tmp_path / "cache"),
                                      "--view", "code", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "view code on train:" in result.output and load_model(out).view == "code"
    assert json.loads((out / "training" / "train_config.json").read_text())["view"] == "code"
    with pytest.raises(ValueError, match="valid views"):
        TrainConfig(train=["x"], view="ast").validate()


def test_feature_cache_key_includes_the_tag(tiny_backbone, tmp_path):
    from conba.encoder.backbone import Backbone, BackboneConfig
    from conba.train.features import compute_states

    bb = Backbone(BackboneConfig(name_or_path=str(tiny_backbone), max_length=32))
    a = compute_states(bb, ["x = 1"], 1, tmp_path, progress=False)
    b = compute_states(bb, ["x = 1"], 1, tmp_path, progress=False, tag="view=code")
    assert len(list(tmp_path.iterdir())) == 2 and a.states.equal(b.states)
