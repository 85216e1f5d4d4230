"""conba distill: layer dropping, the student's folder, the loss, batching, data, the CLI and resuming."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.cli.main import cli
from conba.encoder.backbone import BackboneConfig, keep_layers
from conba.errors import ConfigError
from conba.model import ConbaModel, load_model
from conba.train.distill import DistillConfig, distill_loss, make_student
from conba.train.distill_data import collect_snippets, length_batches, real_code_snippets
from helpers import run_distill

CODES = ["def add(a, b):\n    return a + b\n", "int add(int a, int b) { return a + b; }"]


@pytest.fixture(scope="module")
def teacher(tiny_backbone, tmp_path_factory) -> str:
    """A saved 3-layer tiny teacher (head none, view code)."""
    from helpers import make_tiny_backbone

    bb = make_tiny_backbone(tmp_path_factory.mktemp("bb3"), layers=3)
    return str(ConbaModel.create(str(bb), max_length=64, view="code").save(tmp_path_factory.mktemp("t")))


def test_keep_layers_picks_the_teacher_layers_in_order(teacher):
    t = load_model(teacher)
    s = make_student(t, [0, 2])
    assert s.backbone.num_layers == 2 and s.backbone.config.num_layers == 2
    assert len(t.backbone.layers) == 3  # the teacher is untouched
    for i, j in ((0, 0), (1, 2)):
        mine, theirs = s.backbone.layers[i].state_dict(), t.backbone.layers[j].state_dict()
        assert list(mine) == list(theirs) and all(torch.equal(mine[k], theirs[k]) for k in mine)
    assert s.view == t.view and s.threshold is None and s.pruner is None
    assert s.lexical_weight == t.lexical_weight == 0.0
    t.lexical_weight = 0.3  # a teacher that fuses the lexical channel: its student scores the same way
    assert make_student(t, [0, 2]).lexical_weight == 0.3
    # one kept layer: the student is the teacher's embeddings + that layer, nothing else
    assert make_student(t, [1]).encode(CODES).shape == t.encode(CODES).shape


@pytest.mark.parametrize("keep", [[], [3], [0, 0], [-1]])
def test_keep_layers_rejects_bad_lists(teacher, keep):
    t = load_model(teacher)
    with pytest.raises(ConfigError, match="distinct indices in 0..2"):
        keep_layers(t.backbone.model, keep)


def test_num_layers_is_saved_only_when_set():
    assert "num_layers" not in BackboneConfig().to_dict()  # older folders keep their fingerprint
    assert BackboneConfig(num_layers=3).to_dict()["num_layers"] == 3
    assert BackboneConfig.from_dict({"num_layers": 2}).num_layers == 2
    with pytest.raises(ConfigError, match="num_layers must be >= 0"):
        BackboneConfig.from_dict({"num_layers": -1})


def test_student_folder_round_trip_is_bit_exact(teacher, tmp_path):
    s = make_student(load_model(teacher), [0, 2])
    s.save(tmp_path / "s", dtype="float16")
    back = load_model(tmp_path / "s")
    assert back.backbone.num_layers == 2 and back.fingerprint() == s.fingerprint()
    assert np.array_equal(back.encode(CODES, ["python", "cpp"]), s.encode(CODES, ["python", "cpp"]))


@pytest.mark.slow
def test_student_of_the_embedded_backbone_saves_as_a_delta(tmp_path):
    from safetensors.torch import load_file

    t = ConbaModel.create("default")
    s = make_student(t, [0, 5])
    s.save(tmp_path / "d", dtype="float16")
    delta = load_file(str(tmp_path / "d" / "backbone_delta.safetensors"))
    assert delta and all(k.startswith("encoder.layer.1.") for k in delta)  # layer 0 and embeddings: as the base
    back = load_model(tmp_path / "d")
    assert back.backbone.num_layers == 2 and back.fingerprint() == s.fingerprint()
    assert np.array_equal(back.encode(CODES), s.encode(CODES))


def test_distill_loss_is_zero_only_for_the_teacher():
    torch.manual_seed(0)
    t = torch.nn.functional.normalize(torch.randn(6, 8), dim=-1)
    assert float(distill_loss(t, t, 0.05, 1.0)) == pytest.approx(0.0, abs=1e-5)
    s = torch.nn.functional.normalize(t + 0.3 * torch.randn(6, 8), dim=-1)
    with_sim, cos_only = float(distill_loss(s, t, 0.05, 1.0)), float(distill_loss(s, t, 0.05, 0.0))
    assert cos_only > 0 and with_sim > cos_only
    assert float(distill_loss(s[:1], t[:1], 0.05, 1.0)) == pytest.approx(float(distill_loss(s[:1], t[:1], 0.05, 0)))


def test_length_batches_cover_everything_once_within_budgets():
    lengths = [5, 200, 30, 512, 7, 64, 64, 300, 12, 90] * 7
    batches = length_batches(lengths, batch_size=8, max_batch_tokens=1024, seed=3)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 8
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 1024
    assert batches == length_batches(lengths, 8, 1024, 3) and batches != length_batches(lengths, 8, 1024, 4)


def test_collect_snippets_merges_dedupes_views_and_samples(tmp_path, tiny_data):
    src = tmp_path / "repo"
    src.mkdir()
    (src / "m.py").write_text("import os\n\ndef mul(a, b):\n    c = a * b\n    return c\n\n"
                              "def short():\n    return 1\n", encoding="utf-8")
    codes, langs, where = real_code_snippets([src])
    assert langs == ["python"] and "def mul" in codes[0] and where[0].endswith("m.py:3")  # short() has 2 lines
    train, _ = tiny_data
    every = collect_snippets([str(train)], [str(src)], "code", 0, 0, 0)
    n_distinct = len({(json.loads(x)["language"], json.loads(x)["code"]) for x in train.read_text().splitlines()})
    assert len(every) == n_distinct + 1
    five = collect_snippets([str(train)], [], "raw", 5, 0, 0)  # 5 sampled records, then duplicates dropped
    assert 1 <= len(five) <= 5 and len(set(zip(five.languages, five.codes))) == len(five)
    assert five.codes != collect_snippets([str(train)], [], "raw", 5, 0, 1).codes


def test_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="nothing to learn from"):
        DistillConfig().validate()
    with pytest.raises(FileNotFoundError, match="missing.jsonl: data file not found"):
        DistillConfig(data=[str(tmp_path / "missing.jsonl")]).validate()
    with pytest.raises(ConfigError, match="epochs must be >= 1"):
        DistillConfig(data=["x"], epochs=0).validate()
    with pytest.raises(ConfigError, match="max_length must be >= 8 tokens"):
        DistillConfig(data=["x"], max_length=4).validate()
    with pytest.raises(ConfigError, match="lr_schedule must be one of constant, linear, got 'cosine'"):
        DistillConfig(data=["x"], lr_schedule="cosine").validate()


def test_max_length_is_in_the_signature_only_when_set():
    assert "max_length" not in DistillConfig(data=["x"]).signature()  # runs made before it still resume
    assert DistillConfig(data=["x"], max_length=256).signature()["max_length"] == 256


def test_a_linear_schedule_ties_the_run_to_its_epochs():
    assert "lr_schedule" not in DistillConfig(data=["x"]).signature()  # runs made before it still resume
    linear = DistillConfig(data=["x"], lr_schedule="linear", epochs=2).signature()
    assert linear["lr_schedule"] == "linear" and linear["epochs"] == 2  # the decay ends at the last epoch
    assert "epochs" not in DistillConfig(data=["x"], epochs=2).signature()  # constant: -e extends a run


def _run(teacher: str, tiny_data, out: Path, *extra: str):
    return run_distill(teacher, tiny_data, out, *extra)


@pytest.mark.slow
def test_cli_trains_keeps_the_best_and_resumes(teacher, tiny_data, tmp_path):
    out = tmp_path / "run"
    res = _run(teacher, tiny_data, out, "-e", "1")
    assert res.exit_code == 0, res.output
    student = load_model(out)
    assert student.backbone.num_layers == 2 and student.info["teacher_layers"] == [0, 2]
    report = json.loads((out / "distill" / "distill.json").read_text())
    assert [h["epoch"] for h in report["history"]] == [0, 1]
    assert report["history"][1]["train_loss"] > 0
    res = _run(teacher, tiny_data, out, "-e", "2")  # one more epoch: resumes, does not start over
    assert res.exit_code == 0, res.output
    assert "resuming at epoch 2" in res.output
    assert [h["epoch"] for h in json.loads((out / "distill" / "distill.json").read_text())["history"]] == [0, 1, 2]
    res = _run(teacher, tiny_data, out, "-e", "2", "--lr", "0.5")  # other settings: refused, not mixed
    assert res.exit_code != 0 and "different settings (lr: 0.0001 saved, 0.5 now); use --restart" in res.output
    assert _run(teacher, tiny_data, out, "-e", "1", "--lr", "0.5", "--restart").exit_code == 0


@pytest.mark.slow
def test_cli_linear_schedule_decays_over_all_epochs(teacher, tiny_data, tmp_path, monkeypatch):
    import conba.train.loop as loop

    seen: list[tuple[int, int, str]] = []
    real = loop.scheduled_lr

    def spy(base, step, warmup, total, schedule="constant"):
        seen.append((step, total, schedule))
        return real(base, step, warmup, total, schedule)

    monkeypatch.setattr(loop, "scheduled_lr", spy)
    res = _run(teacher, tiny_data, tmp_path / "run", "-e", "2", "--lr-schedule", "linear", "--lr", "1e-3")
    assert res.exit_code == 0, res.output
    steps = [s for s, _, _ in seen]  # the decay itself: test_scheduled_lr_warms_up_then_holds_or_decays_to_zero
    assert steps == list(range(len(steps))) and {(t, k) for _, t, k in seen} == {(len(steps), "linear")}
    config = json.loads((tmp_path / "run" / "distill" / "distill.json").read_text())["config"]
    assert config["lr_schedule"] == "linear"
    import conba.train.distill_data as distill_data

    def no_teacher(*args, **kwargs):
        raise AssertionError("the teacher encoded before the checkpoint was checked")

    monkeypatch.setattr(distill_data, "teacher_vectors", no_teacher)
    res = _run(teacher, tiny_data, tmp_path / "run", "-e", "3", "--lr-schedule", "linear", "--lr", "1e-3")
    assert res.exit_code != 0 and "(epochs: 2 saved, 3 now)" in res.output, res.output
    assert "a linear schedule ends at its last epoch" in res.output and f"--init {tmp_path / 'run'}" in res.output


@pytest.mark.slow
def test_without_a_bar_each_checkpoint_logs_a_line(teacher, tiny_data, tmp_path):
    from conba.train.distill import distill

    train, dev = tiny_data
    cfg = DistillConfig(teacher=teacher, out=str(tmp_path / "run"), layers=[0, 2], data=[str(train)], dev=[str(dev)],
                        batch_size=4, epochs=1, checkpoint_every=2)
    lines: list[str] = []
    distill(cfg, log=lines.append, progress=False)
    steps = [ln for ln in lines if ln.endswith("checkpoint saved")]
    assert steps and steps[0].startswith("epoch 1/1, batch 2/") and "loss " in steps[0] and "lr " in steps[0]
    lines.clear()
    distill(DistillConfig(**{**cfg.to_dict(), "out": str(tmp_path / "bar")}), log=lines.append, progress=True)
    assert not [ln for ln in lines if ln.endswith("checkpoint saved")]  # the bar shows it instead


@pytest.mark.slow
def test_cli_max_length_sets_the_students_window(teacher, tiny_data, tmp_path):
    out = tmp_path / "short"
    res = _run(teacher, tiny_data, out, "-e", "1", "--max-length", "16")
    assert res.exit_code == 0, res.output
    student, full = load_model(out), load_model(teacher)
    assert student.backbone.max_length == 16 and full.backbone.max_length == 64  # the teacher keeps its own
    long = "def f(a, b):\n" + "".join(f"    x{i} = a * {i} + b\n" for i in range(40))
    assert student.backbone.token_lengths([long]) == [16] and full.backbone.token_lengths([long])[0] > 16
    assert json.loads((out / "distill" / "distill.json").read_text())["config"]["max_length"] == 16
    res = _run(teacher, tiny_data, out, "-e", "1", "--max-length", "32")  # another window: a different run
    assert res.exit_code != 0 and "different settings (max_length: 16 saved, 32 now); use --restart" in res.output
    res = _run(teacher, tiny_data, tmp_path / "bad", "--max-length", "4")
    assert res.exit_code == 1 and "max_length must be >= 8 tokens" in res.output


def test_cli_bad_input(teacher, tiny_data, tmp_path):
    res = _run(teacher, tiny_data, tmp_path / "a", "-L", "0,x")
    assert res.exit_code == 2 and "not a layer number" in res.output
    res = _run(teacher, tiny_data, tmp_path / "b", "-L", "0,3")
    assert res.exit_code == 1 and "the teacher has layers 0..2" in res.output
    missing = str(tmp_path / "no.jsonl")
    res = CliRunner().invoke(cli, ["distill", "-m", teacher, "-o", str(tmp_path / "c"), "-d", missing])
    assert res.exit_code == 1 and f"{missing}: data file not found" in res.output


@pytest.mark.slow
def test_cli_init_continues_an_earlier_student(teacher, tiny_data, tmp_path):
    first = tmp_path / "first"
    assert _run(teacher, tiny_data, first, "-e", "1").exit_code == 0
    res = _run(teacher, tiny_data, tmp_path / "more", "-e", "1", "--init", str(first), "--seed", "1")
    assert res.exit_code == 0, res.output
    history = json.loads((tmp_path / "more" / "distill" / "distill.json").read_text())["history"]
    assert history[0]["note"] == f"{first}, before this run" and [h["epoch"] for h in history] == [0, 1]
    # before training, the run starts from the earlier student, not from layer dropping
    first_dev = json.loads((first / "distill" / "distill.json").read_text())["history"][1]["dev"]
    assert history[0]["dev"] == pytest.approx(first_dev, abs=1e-3)


@pytest.mark.slow
def test_cli_init_drops_the_earlier_students_thresholds(teacher, tiny_data, tmp_path):
    first = tmp_path / "first"
    assert _run(teacher, tiny_data, first, "-e", "1").exit_code == 0
    calibrated = load_model(first)
    calibrated.threshold, calibrated.clone_threshold, calibrated.lexical_weight = 0.5, {"value": 0.7}, 0.2
    calibrated.save(first)
    assert _run(teacher, tiny_data, tmp_path / "more", "-e", "1", "--init", str(first)).exit_code == 0
    more = load_model(tmp_path / "more")
    assert more.threshold is None and more.clone_threshold is None  # stale after training: calibrate again
    assert more.lexical_weight == 0.2  # how it scores is kept


def test_cli_init_must_match_the_layers(teacher, tiny_data, tmp_path):
    res = _run(teacher, tiny_data, tmp_path / "x", "--init", teacher)  # 3 layers, -L 0,2 asks for 2
    assert res.exit_code == 1 and "--init" in res.output and "3 layers" in res.output and "asks for 2" in res.output
