"""An index built with a bare model and --pooling / --trust-remote-code records them beside the model's name:
read-only commands (search, clones, map, eval-repo, serve) reload that model as it was built, remote code
only when --trust-remote-code is given again; commands that record only a model's name refuse the flags in
one line. A tiny random BERT folder (the embedded MiniLM tokenizer), no network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli

pytestmark = pytest.mark.slow  # a tiny model is built and indexed (a few seconds of CPU)

CODE = "def add(a, b):\n    return a + b\n"
PY = ("def add(a, b):\n    total = a + b\n    return total\n\n\n"
      "def biggest(xs):\n    best = xs[0]\n    for x in xs:\n        if x > best:\n            best = x\n"
      "    return best\n")
JAVA = ("class M {\n    static int add(int a, int b) {\n        int total = a + b;\n        return total;\n    }\n\n"
        "    static int biggest(int[] xs) {\n        int best = xs[0];\n        for (int x : xs) {\n"
        "            if (x > best) best = x;\n        }\n        return best;\n    }\n}\n")


def run(*args: str, ok: bool = True):
    res = CliRunner().invoke(cli, list(args))
    if ok:
        assert res.exit_code == 0, res.output
    else:
        assert res.exit_code != 0 and "Traceback" not in res.output, res.output
    return res


def error_line(res) -> str:
    lines = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, res.output
    return lines[0]


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    """A bare Hugging Face BERT folder (no modules.json: mean pooling unless --pooling says otherwise)."""
    import transformers as tf

    from conba.encoder.backbone import embedded_model_path

    folder = tmp_path_factory.mktemp("bare") / "bert-hf"
    tok = tf.AutoTokenizer.from_pretrained(str(embedded_model_path()))
    torch.manual_seed(0)
    tf.BertModel(tf.BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple[Path, Path]:
    from helpers import write_tree

    root = tmp_path_factory.mktemp("tree")
    return write_tree(root / "src", {"m.py": PY}), write_tree(root / "tgt", {"M.java": JAVA})


def _meta(idx: Path, key: str) -> str | None:
    from conba.index.storage.store import Store

    store = Store(idx / "index.sqlite")
    try:
        return store.get_meta(key)
    finally:
        store.close()


def test_read_only_commands_reload_the_bare_model_with_its_pooling(bare, tree, tmp_path):
    import conba

    src, tgt = tree
    idx = tmp_path / "idx"
    run("index", str(src), str(tgt), "--index", str(idx), "-m", str(bare), "--pooling", "cls")
    assert json.loads(_meta(idx, "model_options")) == {"pooling": "cls"}
    assert _meta(idx, "model") == str(bare)
    # no -m, no --pooling: the index's model as it was built (before: "built with model '?'" mismatch)
    res = run("search", "--code", CODE, "--index", str(idx), "-k", "1")
    hit = json.loads(res.output)
    assert hit["name"] == "add"
    cls_vec = conba.load_model(bare, pooling="cls").encode([CODE], languages=["python"])[0]
    mean_vec = conba.load_model(bare).encode([CODE], languages=["python"])[0]
    assert not np.allclose(cls_vec, mean_vec, atol=1e-3)  # the pooling matters for this model
    run("clones", "--index", str(idx), "--threshold", "-1", "--min-lines", "1")
    res = run("map", str(src), str(tgt), "-i", str(idx), "-t", "-1")
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert {r["source"]["name"] for r in rows if r["type"] == "function"} == {"add", "biggest"}
    run("index", str(src), "--index", str(idx))  # an update without the flags keeps the model and its pooling
    assert json.loads(_meta(idx, "model_options")) == {"pooling": "cls"}
    # the same model named without its pooling: a mismatch whose fix names the flag
    line = error_line(run("search", "--code", CODE, "--index", str(idx), "-m", str(bare), ok=False))
    assert f"use its model (-m {bare} --pooling cls)" in line


def test_remote_code_is_recorded_and_asked_again(bare, tree, tmp_path):
    src, tgt = tree
    idx = tmp_path / "idx"
    run("index", str(src), str(tgt), "--index", str(idx), "-m", str(bare), "--pooling", "max", "--trust-remote-code")
    assert json.loads(_meta(idx, "model_options")) == {"pooling": "max", "trust_remote_code": True}
    run("clones", "--index", str(idx), "--threshold", "-1", "--min-lines", "1")  # the index's vectors: no model run
    for args in (["search", "--code", CODE, "--index", str(idx), "-k", "1"],
                 ["map", str(src), str(tgt), "-i", str(idx), "-t", "-1"],
                 ["index", str(src), "--index", str(idx)]):
        line = error_line(run(*args, ok=False))
        assert "runs code from its folder; pass --trust-remote-code" in line and str(idx) in line, args
        run(*args, "--trust-remote-code")
    groups = tmp_path / "groups.jsonl"
    groups.write_text(json.dumps({"group": "g", "files": [str(src / "m.py"), str(tgt / "M.java")]}) + "\n")
    eval_args = ["eval-repo", "-i", str(idx), "-g", str(groups), "--baselines", "none", "--no-clones", "--json"]
    run(*eval_args)  # the index as it is: its vectors, no model run
    assert "pass --trust-remote-code" in error_line(run(*eval_args, str(src), str(tgt), ok=False))  # (re)indexes
    res = run(*eval_args, str(src), str(tgt), "--trust-remote-code")
    assert json.loads(res.stdout.splitlines()[-1])["model"]["name"] == str(bare)


def test_serve_loads_the_index_model_with_its_options(bare, tree, tmp_path):
    pytest.importorskip("fastapi")
    from conba.errors import ConbaError
    from conba.serve.app import resolve_model

    src, _ = tree
    idx = tmp_path / "idx"
    run("index", str(src), "--index", str(idx), "-m", str(bare), "--pooling", "cls", "--trust-remote-code")
    with pytest.raises(ConbaError, match="pass --trust-remote-code"):
        resolve_model(idx, None, {})
    model, name = resolve_model(idx, None, {"trust_remote_code": True})
    assert name == str(bare) and model.backbone.config.pooling == "cls"
    assert "--trust-remote-code" in run("serve", "--help").output


@pytest.mark.parametrize("command", [["distill", "-o", "out"], ["prune", "train", "-o", "out"], ["bench", "speed"]])
def test_commands_that_record_only_a_name_point_away_from_the_bare_flags(bare, command, tmp_path):
    """They are not options of these commands (not in --help); given, they say in one line what to do."""
    name = " ".join(command[:2] if command[0] != "distill" else command[:1])
    assert "--pooling" not in run(*command[:2 if command[0] != "distill" else 1], "--help").output
    line = error_line(run(*command, "-m", str(bare), "--pooling", "cls", ok=False))
    assert f"--pooling is not taken by `conba {name}`, which records only the model's name" in line
    assert "conba.load_model('NAME', pooling='P').save('DIR')" in line and "-m DIR" in line
    line = error_line(run(*command, "-m", str(bare), "--trust-remote-code", ok=False))
    assert f"--trust-remote-code is not taken by `conba {name}`" in line
    assert "cannot run a model that needs its own code" in line


def test_ray_actors_load_the_model_with_the_recorded_options(bare, tmp_path, monkeypatch):
    """``index --ray`` ships the model to each actor with the options the index records."""
    from conba.index.scale.ray_encode import EncodeActor, model_source

    seen: list[dict] = []

    class Stop(Exception):
        pass

    def spy(name, **options):
        seen.append(options)
        raise Stop

    monkeypatch.setattr("conba.model.load_model", spy)
    for options in ({"pooling": "cls", "trust_remote_code": True}, None):
        with pytest.raises(Stop):
            EncodeActor(model_source(str(bare), "f", options), None, 1)
    assert seen == [{"pooling": "cls", "trust_remote_code": True}, {}]
