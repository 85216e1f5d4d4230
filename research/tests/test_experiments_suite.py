"""The experiment suite end to end on the tiny backbone and dataset (every part, one seed, one epoch)."""

import json
import sys
from pathlib import Path

import pytest

from conba_research.config import ExperimentConfig
from conba_research.suite import PARTS, load_run_noise, run_all

pytestmark = pytest.mark.slow  # a module fixture trains / starts servers for every test here



def tiny_config(tiny_backbone, tmp_path, **kw):
    from helpers import make_tiny_dataset

    train = make_tiny_dataset(tmp_path / "tiny_train.jsonl", copies=3)
    dev = make_tiny_dataset(tmp_path / "tiny_dev.jsonl", copies=2)
    base = dict(train=[str(train)], dev=[str(dev)], work=str(tmp_path / "work"), backbone=str(tiny_backbone),
                cap=0, train_limit=0, dev_limit=0, seeds=[0], epochs=1, groups_per_batch=2, per_group=2,
                token_groups_per_batch=2, token_steps=1, temperatures=[0.05, 0.5], classifier_pairs=40,
                classifier_epochs=2, tsne_groups=4, cache_dir=str(tmp_path / "cache"), device="cpu",
                run_plots=False)
    return ExperimentConfig.quick_preset(**{**base, **kw})


@pytest.fixture(scope="module")
def suite_run(tiny_backbone, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("suite")
    cfg = tiny_config(tiny_backbone, tmp)
    logs: list[str] = []
    data = run_all(cfg, tmp / "out", progress=False, log=logs.append, command="conba experiment all --quick")
    return cfg, tmp, data, logs


def test_suite_writes_every_report_and_figure(suite_run):
    cfg, tmp, data, _ = suite_run
    out = tmp / "out"
    expected = {
        "ablation": ["ablation.json", "ablation.md", "ablation.png", "ablation_pairs.png"],
        "temperature": ["temperature.json", "temperature.md", "temperature_roc.png", "temperature.png"],
        "classifiers": ["classifiers.json", "classifiers.md", "classifiers.png"],
        "figures": ["figures.json", "figures.md", "tsne.png", "control_weight.png", "curves.png"],
    }
    for part, files in expected.items():
        for f in files:
            path = out / part / f
            assert path.exists(), path
            if f.endswith(".png"):
                assert 5_000 < path.stat().st_size < 300_000, path
    index = (out / "README.md").read_text()
    for part in expected:
        assert f"({part}/{part}.md)" in index
    assert set(data["timings"]) == set(PARTS)
    # 9 trained variants + τ = 0.5 (τ = 0.05 is the ablation's conba_codes run)
    assert data["runs"]["trained"] == 10 and data["runs"]["reused"] == 0
    assert "This command trained" in index


def test_suite_numbers(suite_run):
    cfg, tmp, data, _ = suite_run
    abl = json.loads((tmp / "out" / "ablation" / "ablation.json").read_text())
    assert list(abl["variants"]) == ["no_conba", "linear", "conba", "conba_codes", "no_control", "no_feedback",
                                     "no_state_path", "tokens", "scan", "conba_short"]
    for v in abl["variants"].values():
        agg = v["aggregate"]["tiny_dev"]
        assert 0 <= agg["map_at_r"]["mean"] <= 1 and 0 <= agg["auc"]["mean"] <= 1
        assert agg["pairs"] and all("->" in p for p in agg["pairs"])
    temp = json.loads((tmp / "out" / "temperature" / "temperature.json").read_text())
    assert set(temp["summary"]) == {"0.05", "0.5"}
    clf = json.loads((tmp / "out" / "classifiers" / "classifiers.json").read_text())
    assert {"mlp", "svm", "cosine (train threshold)"} <= set(clf["results"])
    for entry in clf["results"].values():
        assert {"accuracy", "precision", "recall", "f1", "roc_auc"} <= set(entry["tiny_dev"])
    # the token window and step cap were applied to the over-tokens heads only
    runs = {r["variant"]: r for v in abl["variants"].values() for r in v["runs"]}
    for name in ("tokens", "scan", "conba", "conba_short"):
        meta = json.loads((Path(runs[name]["run_dir"]) / "experiment_run.json").read_text())
        assert meta["head_tokens"] == (cfg.head_tokens if name in ("tokens", "scan") else 0)
        assert meta["token_steps"] == (cfg.token_steps if name != "conba" else 0)


def test_suite_resumes_and_reuses_runs(suite_run):
    cfg, tmp, _, _ = suite_run
    logs: list[str] = []
    data = run_all(cfg, tmp / "out2", parts=["temperature"], progress=False, log=logs.append)
    assert any("reusing" in m for m in logs) and not any("training ->" in m for m in logs)
    assert data["runs"] == {**data["runs"], "trained": 0, "reused": 2}


def test_noise_missing_module_is_skipped(tiny_backbone, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "conba_research.noise", None)  # import now fails as if missing
    assert load_run_noise() is None
    cfg = tiny_config(tiny_backbone, tmp_path)
    logs: list[str] = []
    data = run_all(cfg, tmp_path / "out", parts=["noise"], progress=False, log=logs.append)
    assert data["skipped"] == ["noise"] and any("noise: skipped" in m for m in logs)


def test_bad_parts(tiny_backbone, tmp_path):
    with pytest.raises(ValueError, match="unknown part"):
        run_all(tiny_config(tiny_backbone, tmp_path), tmp_path / "o", parts=["ablation", "typo"], progress=False)
