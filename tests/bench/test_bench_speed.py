import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.bench.speed import SpeedConfig, group_subset, run_speed, sample_records
from conba.data import CodeRecord


@pytest.fixture()
def tiny_model(tiny_backbone, tmp_path, monkeypatch):
    """A conba model folder over the tiny backbone with an SDTP pruner (pruning off needs no training)."""
    from conba.heads import HeadConfig
    from conba.model import ConbaModel
    from conba.prune import PruneConfig, PruneModule

    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(0)
    m = ConbaModel.create(str(tiny_backbone), HeadConfig(kind="none"))
    m.pruner = PruneModule(PruneConfig(layers=[1], keep_ratio=0.5, dim=32, num_layers=2))
    m.save(tmp_path / "m")
    return tmp_path / "m"


def test_sampling_helpers():
    recs = [CodeRecord(str(i), f"g{i // 3}", "python", f"x{i}") for i in range(30)]
    assert len(sample_records(recs, 10, 0)) == 10
    assert sample_records(recs, 10, 0) == sample_records(recs, 10, 0)
    assert len(sample_records(recs, 100, 0)) == 30
    sub = group_subset(recs, 7, 0)
    groups = {r.group for r in sub}
    assert len(sub) == 3 * len(groups) and len(sub) >= 7  # whole groups only
    assert group_subset(recs, 0, 0) == recs


@pytest.mark.slow
def test_speed_benchmark_on_tiny_model(tiny_model, tiny_data):
    pytest.importorskip("sentence_transformers")
    train, _ = tiny_data
    variants = ["st", "exact", "sdtp"]
    try:
        import onnxruntime  # noqa: F401

        variants += ["onnx", "both"]
    except ImportError:
        pass
    cfg = SpeedConfig(data=str(train), limit=8, repeats=2, model=str(tiny_model), variants=variants,
                      map_variants=["exact", "sdtp"])
    report = run_speed(cfg)
    rows = report["variants"]
    assert set(rows) == set(variants)
    for name in variants:
        assert rows[name]["snippets_per_s"] > 0 and len(rows[name]["wall_s"]) == 2
        assert "ratio_to_st" in rows[name]
    assert rows["st"]["ratio_to_st"] == 1.0
    assert rows["exact"]["cos_to_exact_min"] == pytest.approx(1.0, abs=1e-6)
    assert report["cos_headless_exact_vs_st"]["pass_0.9999"]  # same weights, no head: same vectors
    assert 0 <= rows["exact"]["map_at_r"] <= 1 and rows["exact"]["map_delta_points"] == 0
    assert "map_delta_points" in rows["sdtp"] and "map_at_r" not in rows["st"]
    assert report["pruner"]["layers"] == [1] and report["model"]["fingerprint"]
    again = run_speed(SpeedConfig(data=str(train), limit=8, repeats=1, model=str(tiny_model), variants=["exact"],
                                  map_variants=["exact"]))
    assert again["variants"]["exact"]["map_cached"] is True  # MAP@R embeddings come from the cache
    assert again["variants"]["exact"]["map_at_r"] == rows["exact"]["map_at_r"]
    from conba.bench.report import format_report

    text = format_report(report)
    assert "sentence-transformers" in text and "| conba exact (torch) |" in text and "PASS" in text


def test_variants_without_pruner_are_skipped(tiny_backbone, tiny_data, tmp_path, monkeypatch):
    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))
    train, _ = tiny_data
    report = run_speed(SpeedConfig(data=str(train), limit=4, repeats=1, model=str(tiny_backbone),
                                   variants=["exact", "sdtp"], map_variants=[]))
    assert "sdtp" in report["skipped"] and "conba prune train" in report["skipped"]["sdtp"]
    assert set(report["variants"]) == {"exact"}


def test_bench_cli(tiny_model, tiny_data, tmp_path):
    from conba.cli.main import cli

    train, _ = tiny_data
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["bench", "speed", "-d", str(train), "-n", "4", "--repeats", "1",
                                   "-m", str(tiny_model), "-V", "exact,sdtp", "--map-variants", "none", "-j", str(out),
                                   "--max-batch-tokens", "64"])
    assert res.exit_code == 0, res.output
    assert "| conba + SDTP (torch) |" in res.output
    assert set(json.loads(out.read_text())["variants"]) == {"exact", "sdtp"}


@pytest.mark.parametrize("args,msg", [(["-V", "exact,bogus"], "unknown variant"), (["-n", "0"], "limit"),
                                      (["-d", "missing.jsonl"], "not found"), (["--repeats", "0"], "repeats"),
                                      (["--max-batch-tokens", "-2"], "max_batch_tokens")])
def test_bench_cli_bad_input(tiny_model, tiny_data, args, msg):
    from conba.cli.main import cli

    train, _ = tiny_data
    res = CliRunner().invoke(cli, ["bench", "speed", "-d", str(train), "-m", str(tiny_model),
                                   "--map-variants", "none", *args])
    assert res.exit_code != 0 and msg in res.output and "Traceback" not in res.output


def test_threads_env(monkeypatch):
    from conba.settings import apply_threads, requested_threads

    monkeypatch.delenv("CONBA_THREADS", raising=False)
    assert requested_threads() == 0
    before = torch.get_num_threads()
    monkeypatch.setenv("CONBA_THREADS", "1")
    try:
        assert apply_threads() == 1
    finally:
        torch.set_num_threads(before)
    for bad in ("two", "-1"):
        monkeypatch.setenv("CONBA_THREADS", bad)
        with pytest.raises(ValueError, match="CONBA_THREADS"):
            requested_threads()


def test_length_sorted_batches_pad_like_the_tokenizer(tiny_backbone):
    from conba.encoder.backbone import Backbone, BackboneConfig
    from conba.engine.batching import length_sorted_batches, pad_batch, tokenize_ids

    bb = Backbone(BackboneConfig(name_or_path=str(tiny_backbone), max_length=12))
    codes = ["a b c", "a " * 50, "x", "def add ( a , b )"]
    ids = tokenize_ids(bb, codes)
    assert [len(x) for x in ids] == bb.token_lengths(codes)
    batches = list(length_sorted_batches(ids, 2, 0))
    assert [b.index for b in batches] == [[1, 3], [0, 2]]  # longest first
    for b in batches:
        ref = bb.tokenize([codes[i] for i in b.index])
        assert torch.equal(b.input_ids, ref["input_ids"]) and torch.equal(b.attention_mask, ref["attention_mask"])
    with pytest.raises(ValueError, match="batch_size"):
        list(length_sorted_batches(ids, 0, 0))
    with pytest.raises(ValueError, match="at least one"):
        pad_batch([], 0)


def test_token_budget_caps_padded_tokens_and_keeps_every_snippet(tiny_backbone):
    from conba.encoder.backbone import Backbone, BackboneConfig
    from conba.engine.batching import length_sorted_batches, tokenize_ids

    bb = Backbone(BackboneConfig(name_or_path=str(tiny_backbone), max_length=12))
    codes = ["a " * n for n in (1, 9, 3, 20, 2, 5, 7, 4)]
    ids = tokenize_ids(bb, codes)
    batches = list(length_sorted_batches(ids, 4, 0, max_tokens=24))
    seen = [i for b in batches for i in b.index]
    assert sorted(seen) == list(range(len(codes)))
    for b in batches:
        rows, width = b.input_ids.shape
        assert rows <= 4 and (rows == 1 or rows * width <= 24)
    # the longest snippets (12 tokens) go two per batch; short ones fill up to batch_size
    assert [len(b.index) for b in batches][0] == 2 and max(len(b.index) for b in batches) == 4
    # a budget smaller than one snippet still makes progress, one snippet per batch
    assert all(len(b.index) == 1 for b in length_sorted_batches(ids, 4, 0, max_tokens=1))
    assert len(list(length_sorted_batches(ids, 4, 0, max_tokens=None))) == 2
    with pytest.raises(ValueError, match="max_tokens"):
        list(length_sorted_batches(ids, 4, 0, max_tokens=0))


def test_encode_token_budget_gives_the_same_embeddings(tiny_backbone):
    from conba.model import ConbaModel

    model = ConbaModel.create(str(tiny_backbone), max_length=12)
    codes = ["a " * n + "b" for n in (1, 9, 3, 20, 2, 5, 7, 4)]
    plain = model.encode(codes, batch_size=8, max_batch_tokens=None)
    budget = model.encode(codes, batch_size=8, max_batch_tokens=16)
    np.testing.assert_allclose(budget, plain, atol=1e-5)


@pytest.mark.slow
def test_student_variants(tiny_model, tiny_data, tmp_path):
    """fast / fast-onnx time the student folder given by --student (its own fingerprint keys the MAP@R cache);
    without a student they are skipped with the reason."""
    from conba.bench.report import format_report
    from conba.cli.main import cli
    from conba.model import load_model
    from conba.train.distill import make_student

    train, _ = tiny_data
    student = make_student(load_model(tiny_model), [1]).save(tmp_path / "student")
    report = run_speed(SpeedConfig(data=str(train), limit=6, repeats=1, model=str(tiny_model), student=str(student),
                                   variants=["exact", "raw", "fast"], map_variants=["exact", "fast"]))
    rows = report["variants"]
    assert rows["raw"]["snippets_per_s"] > 0 and "| conba exact, raw text (no input view) |" in format_report(report)
    assert rows["fast"]["snippets_per_s"] > 0 and report["student"]["layers"] == 1
    assert rows["fast"]["cos_to_exact_mean"] < 0.999999  # other weights: other vectors
    assert "map_delta_points" in rows["fast"]
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["bench", "speed", "-d", str(train), "-n", "4", "--repeats", "1", "-m",
                                   str(tiny_model), "-V", "exact,fast", "--map-variants", "none", "-j", str(out)])
    assert res.exit_code == 0, res.output
    assert "no student: pass --student DIR" in json.loads(out.read_text())["skipped"]["fast"]
