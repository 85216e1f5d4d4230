import json

import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.data import cap_records, subset_groups
from conba.model import load_model
from conba.train.config import TrainConfig
from conba.train.trainer import Trainer
from helpers import train_config
from helpers.heads import tiny_train_config as cfg
from helpers.heads import train_and_load


@pytest.mark.parametrize("tune,head,mode", [("none", "linear", "pooled"), ("top-k", "none", "pooled"),
                                            ("full", "linear", "pooled")])  # research heads: research/tests
@pytest.mark.slow
def test_train_modes_produce_loadable_model(tiny_backbone, tiny_data, tmp_path, tune, head, mode):
    train_and_load(tiny_backbone, tiny_data, tmp_path, tune, head, mode)


@pytest.mark.slow
def test_top_k_trains_only_top_layers(tiny_backbone, tiny_data, tmp_path):
    c = cfg(tiny_backbone, tiny_data, tmp_path, tune="top-k", top_k=1, dev=[])  # no dev: best = lowest loss
    t = Trainer(c, progress=False, log=lambda m: None)
    before = {n: p.clone() for n, p in t.model.backbone.model.named_parameters()}
    t.fit()
    after = dict(load_model(tmp_path / "out").backbone.model.named_parameters())
    changed = {n for n in before if not before[n].equal(after[n])}
    assert changed and all(n.startswith("encoder.layer.1.") for n in changed)


@pytest.mark.slow
def test_resume_after_interruption(tiny_backbone, tiny_data, tmp_path):
    c = cfg(tiny_backbone, tiny_data, tmp_path, epochs=1, checkpoint_every=1)
    Trainer(c, progress=False, log=lambda m: None).fit()
    logs = []
    c2 = cfg(tiny_backbone, tiny_data, tmp_path, epochs=3, checkpoint_every=1)
    Trainer(c2, progress=False, log=logs.append).fit()
    assert any("resumed" in m and "epoch 2" in m for m in logs)
    saved = [m for m in logs if m.endswith("checkpoint saved")]  # no bar: a line per checkpoint
    assert saved and saved[0].startswith("epoch 2/3, batch 1/") and "loss " in saved[0] and "lr " in saved[0]
    hist = json.loads((tmp_path / "out" / "training" / "history.json").read_text())
    assert [e["epoch"] for e in hist["epochs"]] == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="different settings"):
        Trainer(cfg(tiny_backbone, tiny_data, tmp_path, temperature=0.5), progress=False, log=logs.append).fit()


def test_refuses_foreign_out_folder(tiny_backbone, tiny_data, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "precious.txt").write_text("keep me")
    with pytest.raises(RuntimeError, match="not a conba model"):
        Trainer(cfg(tiny_backbone, tiny_data, tmp_path), progress=False, log=lambda m: None).fit()
    assert (tmp_path / "out" / "precious.txt").read_text() == "keep me"


def test_config_validation():
    with pytest.raises(ValueError, match="no training data"):
        TrainConfig().validate()
    with pytest.raises(ValueError, match="tune"):
        TrainConfig(train=["x"], tune="half").validate()
    with pytest.raises(ValueError, match="temperature"):
        TrainConfig(train=["x"], temperature=0).validate()
    with pytest.raises(ValueError, match="max_length must be >= 8 tokens, got 0"):
        TrainConfig(train=["x"], max_length=0).validate()
    with pytest.raises(ValueError, match="learning rates must be >= 0, got lr_head -1"):
        TrainConfig(train=["x"], lr_head=-1).validate()


def test_subsets(tiny_data):
    from conba.data import load_records

    recs = load_records(tiny_data[0])
    assert len(cap_records(recs, 1, 0)) == 12  # 4 groups x 3 languages
    sub = subset_groups(recs, 10, 0)
    groups = {r.group for r in sub}
    assert 10 <= len(sub) < len(recs) and len(groups) < len({r.group for r in recs})
    assert sub == [r for r in recs if r.group in groups]  # whole groups, in the input order
    assert len(sub) - min(sum(r.group == g for r in sub) for g in groups) < 10  # no group more than needed
    assert subset_groups(recs, 10, 1) != sub  # the seed picks the groups
    assert subset_groups(recs, 0, 0) == recs == subset_groups(recs, len(recs), 0)


@pytest.mark.slow
def test_cli_train_and_eval(tiny_backbone, tiny_data, tmp_path):
    train, dev = tiny_data
    runner = CliRunner()
    out = tmp_path / "m"
    res = runner.invoke(cli, ["train", str(train), "-D", str(dev), "-o", str(out), "--backbone", str(tiny_backbone),
                              "-P", "2", "-K", "3", "-e", "1", "--no-progress",
                              "--config", train_config(tmp_path, cache_dir=tmp_path / "c")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["eval", str(dev), "--model", str(out), "-j", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert "MAP@R" in res.output and "tfidf" in res.output.lower()
    result = json.loads((tmp_path / "r.json").read_text())
    assert 0 <= result["retrieval"]["conba"]["mean"]["map_at_r"] <= 1
    assert result["classification"]["threshold_source"] == "stored with the model"
    res = runner.invoke(cli, ["eval", str(dev), "--model", str(out), "--calibrate", str(dev), "--no-tfidf"])
    assert res.exit_code == 0 and "tfidf" not in res.output.lower()
    res = runner.invoke(cli, ["eval", str(dev), "--model", str(out), "--no-tfidf", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["classification"]["threshold_source"] == "stored with the model"


def test_cli_bad_inputs(tiny_backbone, tiny_data, tmp_path):
    runner = CliRunner()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "group": "g", "language": "python", "code": "x"}\n{oops\n')
    res = runner.invoke(cli, ["eval", str(bad), "--model", str(tiny_backbone)])
    assert res.exit_code == 1 and "bad.jsonl:2: invalid JSON" in res.output
    res = runner.invoke(cli, ["eval", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 1 and "file not found" in res.output
    res = runner.invoke(cli, ["train", str(bad), "-o", str(tmp_path / "o")])
    assert res.exit_code == 1 and "bad.jsonl:2" in res.output
    one = tmp_path / "one.jsonl"
    one.write_text('{"id": "a", "group": "g", "language": "python", "code": "x"}\n')
    res = runner.invoke(cli, ["eval", str(one), "--model", str(tiny_backbone)])
    assert res.exit_code == 1 and "at least 2 languages" in res.output
    res = runner.invoke(cli, ["eval", str(one), "--model", str(tmp_path / "nomodel")])
    assert res.exit_code == 1
    onegroup = tmp_path / "onegroup.jsonl"  # two languages, one group: clones but no non-clones
    onegroup.write_text('{"id": "a", "group": "g", "language": "python", "code": "x"}\n'
                        '{"id": "b", "group": "g", "language": "java", "code": "int x;"}\n')
    res = runner.invoke(cli, ["eval", str(onegroup), "--model", str(tiny_backbone)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert f"{onegroup}: no cross-language clone / not-clone pairs in 2 snippets (1 group(s), 2 language(s))" \
        in res.output
    res = runner.invoke(cli, ["train", str(tiny_data[0]), "-D", str(onegroup), "-o", str(tmp_path / "o2"),
                              "--backbone", str(tiny_backbone)])
    assert res.exit_code == 1 and f"{onegroup}: no cross-language clone / not-clone pairs" in res.output
    assert not (tmp_path / "o2" / "training").exists()  # refused before any training


def test_eval_checks_its_data_before_encoding(tiny_backbone, tiny_data, tmp_path, monkeypatch):
    from conba.eval import runner

    calls: list[int] = []
    monkeypatch.setattr(runner, "embedding_similarity", lambda emb: calls.append(1) or emb @ emb.T)
    _, dev = tiny_data
    res = CliRunner().invoke(cli, ["eval", str(dev), "--model", str(tiny_backbone), "-n", "1"])
    assert res.exit_code == 1 and "(3 records of -n 1): no cross-language clone / not-clone pairs" in res.output
    assert not calls
    res = CliRunner().invoke(cli, ["eval", str(dev), "--model", str(tiny_backbone), "-j", str(dev / "x.json")])
    assert res.exit_code == 1 and f"folder {dev} is a file, not a folder" in res.output and not calls


def test_cli_encode_and_help(tiny_backbone, tmp_path, tiny_data):
    runner = CliRunner()
    res = runner.invoke(cli, ["encode", "-", "--model", str(tiny_backbone), "-l", "python"], input="def f(): pass\n")
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.output)["embedding"]) == 32
    res = runner.invoke(cli, ["encode", str(tiny_data[1]), "--model", str(tiny_backbone), "--plain"])
    assert res.exit_code == 0 and len(res.output.strip().splitlines()) == 12
    res = runner.invoke(cli, ["encode", "-", "--model", str(tiny_backbone)], input="   ")
    assert res.exit_code == 1 and "no code" in res.output
    res = runner.invoke(cli, ["encode", "-", "--model", str(tiny_backbone), "--engine", "tensorrt"], input="x")
    assert res.exit_code == 2 and "tensorrt" in res.output


@pytest.mark.slow
def test_cli_encode_onnx_engine(tiny_backbone, monkeypatch):
    import numpy as np

    runner = CliRunner()
    args = ["encode", "-", "--model", str(tiny_backbone), "-l", "python"]
    exact = json.loads(runner.invoke(cli, args, input="def f(): pass\n").output)["embedding"]
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    else:
        res = runner.invoke(cli, [*args, "--engine", "onnx-fp32"], input="def f(): pass\n")
        assert res.exit_code == 0, res.output
        assert np.allclose(json.loads(res.output)["embedding"], exact, atol=1e-4)
    import conba.engine.onnx_export as ox
    import conba.engine.onnx_runtime as ort_mod

    def missing():
        raise ox.OnnxUnavailable("the ONNX engine needs onnxruntime and onnx: pip install 'conba[onnx]'")
    monkeypatch.setattr(ox, "require_onnx", missing)
    monkeypatch.setattr(ort_mod, "require_onnx", missing)
    res = runner.invoke(cli, [*args, "--engine", "onnx"], input="def f(): pass\n")
    assert res.exit_code == 1 and "pip install 'conba[onnx]'" in res.output and "Traceback" not in res.output
    for cmd in ["train", "eval", "encode"]:
        res = runner.invoke(cli, [cmd, "--help"])
        assert res.exit_code == 0 and "Examples" in res.output


@pytest.mark.slow
def test_a_resumed_run_equals_an_uninterrupted_one(tiny_backbone, tiny_data, tmp_path, monkeypatch):
    """Crash in epoch 2 after a mid-epoch checkpoint; the resumed run ends with the same weights (the
    checkpoint restores the optimizer and the RNG that the backbone's dropout draws from)."""
    import conba.train.trainer as trainer_mod

    def run(out, crash_at=None):
        c = cfg(tiny_backbone, tiny_data, tmp_path, out=str(tmp_path / out), tune="full", checkpoint_every=1)
        real, calls = trainer_mod.in_batch_loss, []

        def loss(*a, **kw):
            calls.append(1)
            if len(calls) == crash_at:
                raise KeyboardInterrupt
            return real(*a, **kw)

        monkeypatch.setattr(trainer_mod, "in_batch_loss", loss)
        logs: list[str] = []
        try:
            return Trainer(c, progress=False, log=logs.append).fit(), logs
        finally:
            monkeypatch.setattr(trainer_mod, "in_batch_loss", real)

    straight, _ = run("a")
    history = json.loads((tmp_path / "a" / "training" / "history.json").read_text())
    steps = len(history["step_loss"]) // 2
    with pytest.raises(KeyboardInterrupt):
        run("b", crash_at=steps + 2)  # epoch 2, after its first step's checkpoint
    resumed, logs = run("b")
    assert any("resumed" in m and "epoch 2" in m for m in logs)
    again = json.loads((tmp_path / "b" / "training" / "history.json").read_text())
    assert again["step_loss"] == history["step_loss"]  # every step, before and after the crash, the same
    a, b = straight.state_dict(), resumed.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
