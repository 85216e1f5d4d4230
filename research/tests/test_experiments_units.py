"""Building blocks of the experiment suite: config, data subsets, token windows, metrics, step caps."""

import json

import numpy as np
import pytest
import torch

from conba.data import CodeRecord
from conba.train.features import TokenStates
from conba_research.config import ExperimentConfig, discover
from conba_research.metrics import aggregate, mean_std, pair_split, score_embeddings
from conba_research.runner import REFERENCE, Variant
from conba_research.states import window


def test_window_keeps_first_tokens():
    states = torch.arange(10, dtype=torch.float16)[:, None].repeat(1, 2)  # 10 token states of width 2
    ts = TokenStates(states, torch.tensor([0, 3, 4, 10]))  # lengths 3, 1, 6
    w = window(ts, 2)
    assert w.lengths().tolist() == [2, 1, 2]
    x, mask = w.batch([0, 1, 2])
    assert x[:, :, 0].tolist() == [[0, 1], [3, 0], [4, 5]]
    assert mask.tolist() == [[True, True], [True, False], [True, True]]
    assert window(ts, 0) is ts and window(ts, 6) is ts


def test_config_validation(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text("")
    ok = dict(train=[str(f)], dev=[str(f)])
    ExperimentConfig(**ok).validate()
    cases = [({"train": []}, "no training data"), ({"dev": []}, "no dev data"),
             ({"train": [str(tmp_path / "missing.jsonl")]}, "file not found"), ({"seeds": [1, 1]}, "seeds"),
             ({"epochs": 0}, "epochs"), ({"head_tokens": -1}, "head_tokens"), ({"per_group": 1}, "per group"),
             ({"temperatures": [0.1, 0]}, "temperatures"), ({"max_length": 4}, "max_length"),
             ({"classifier_pairs": 5}, "classifier_pairs")]
    for change, msg in cases:
        with pytest.raises(ValueError, match=msg):
            ExperimentConfig(**{**ok, **change}).validate()
    cfg = ExperimentConfig.quick_preset(**ok)
    cfg.save(tmp_path / "c.json")
    assert ExperimentConfig.load(tmp_path / "c.json") == cfg and cfg.quick and len(cfg.seeds) == 2


def test_discover_skips_pair_format(tmp_path):
    from helpers import make_tiny_dataset

    make_tiny_dataset(tmp_path / "x_train.jsonl")
    make_tiny_dataset(tmp_path / "x_dev.jsonl")
    (tmp_path / "pairs_dev.jsonl").write_text(json.dumps({"code": "a", "language": "java", "positive": {}}) + "\n")
    train, dev = discover(tmp_path)
    assert [p.split("/")[-1] for p in train] == ["x_train.jsonl"]
    assert [p.split("/")[-1] for p in dev] == ["x_dev.jsonl"]
    with pytest.raises(ValueError, match="not a folder"):
        discover(tmp_path / "nope")
    with pytest.raises(ValueError, match="not a folder"):
        discover(tmp_path / "x_train.jsonl")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="needs at least one"):
        discover(empty)


def test_prepare_is_seed_independent_and_content_named(tmp_path):
    from conba_research.data import prepare
    from helpers import make_tiny_dataset

    tr = make_tiny_dataset(tmp_path / "t_train.jsonl", copies=3)
    dv = make_tiny_dataset(tmp_path / "t_dev.jsonl")
    a = prepare(ExperimentConfig(train=[str(tr)], dev=[str(dv)], work=str(tmp_path / "w"), cap=1, seeds=[0]),
                log=lambda m: None)
    b = prepare(ExperimentConfig(train=[str(tr)], dev=[str(dv)], work=str(tmp_path / "w"), cap=1, seeds=[5, 6]),
                log=lambda m: None)
    assert a.train_path == b.train_path and len(a.train_records) == 12  # 4 groups x 3 languages, cap 1
    assert a.select.name == "t_dev" and a.describe()["eval"]["t_dev"]["records"] == 12
    c = prepare(ExperimentConfig(train=[str(tr)], dev=[str(dv)], work=str(tmp_path / "w"), cap=2),
                log=lambda m: None)
    assert c.train_path != a.train_path
    one = tmp_path / "one_dev.jsonl"
    one.write_text("".join(line + "\n" for line in dv.read_text().splitlines()[:3]))  # one group
    with pytest.raises(ValueError, match="one_dev.jsonl: no cross-language clone / not-clone pairs"):
        prepare(ExperimentConfig(train=[str(tr)], dev=[str(one)], work=str(tmp_path / "w"), cap=1), log=lambda m: None)


def records(groups=4, langs=("java", "python", "cpp")):
    return [CodeRecord(f"{g}/{lang}", f"g{g}", lang, "x") for g in range(groups) for lang in langs]


def test_score_embeddings_perfect_and_random():
    recs = records()
    perfect = np.zeros((len(recs), 8), dtype=np.float32)
    for k, r in enumerate(recs):
        perfect[k, int(r.group[1:])] = 1.0
    s = score_embeddings(perfect, recs)
    assert s["map_at_r"] == pytest.approx(1.0) and s["auc"] == pytest.approx(1.0) and s["f1"] == pytest.approx(1.0)
    assert set(s["pairs"]) == {f"{a}->{b}" for a in ("cpp", "java", "python") for b in ("cpp", "java", "python")
                               if a != b}
    rng = np.random.default_rng(0)
    noisy = score_embeddings(rng.normal(size=(len(recs), 8)).astype(np.float32), recs)
    assert noisy["map_at_r"] < 0.9


def test_pair_split_halves_by_group():
    recs = records(groups=6)
    i, j, labels, calib = pair_split(recs)
    assert calib.any() and (~calib).any()
    calib_groups = {recs[a].group for a in i[calib]}
    test_groups = {recs[a].group for a in i[~calib]}
    assert not calib_groups & test_groups


def test_mean_std_and_aggregate():
    assert mean_std([1.0, 3.0]) == (2.0, pytest.approx(np.sqrt(2)))
    assert mean_std([0.5]) == (0.5, 0.0)
    assert np.isnan(mean_std([float("nan")])[0])
    agg = aggregate([{"map_at_r": 0.2, "mrr": 0, "f1": 0, "auc": 0, "accuracy": 0, "pairs": {"a->b": 0.2}},
                     {"map_at_r": 0.4, "mrr": 0, "f1": 0, "auc": 0, "accuracy": 0, "pairs": {"a->b": 0.6}}])
    assert agg["map_at_r"]["mean"] == pytest.approx(0.3) and agg["pairs"]["a->b"]["mean"] == pytest.approx(0.4)


@pytest.mark.slow
def test_trainer_options_cap_the_steps_and_skip_the_plots(tiny_backbone, tiny_data, tmp_path):
    from conba.train.config import TrainConfig
    from conba.train.trainer import Trainer

    train, _ = tiny_data
    cfg = TrainConfig(train=[str(train)], out=str(tmp_path / "out"), backbone=str(tiny_backbone), head="linear",
                      groups_per_batch=2, per_group=2, epochs=1, cache_dir=str(tmp_path / "cache"), device="cpu")
    full = Trainer(cfg, progress=False, log=lambda m: None, plot_history=False)
    full.fit()
    assert len(full.history.steps) > 1 and not (tmp_path / "out" / "training" / "curves.png").exists()
    capped = Trainer(cfg, progress=False, log=lambda m: None, max_steps_per_epoch=1, plot_history=False)
    capped.fit(restart=True)
    assert len(capped.history.steps) == 1


def test_variants():
    assert REFERENCE.control_codes and not REFERENCE.token_head
    assert Variant("s", "", head="conba-scan").token_head and Variant("t", "", head_mode="tokens").token_head
    assert Variant("q", "", short=True).limited and not Variant("q", "", short=True).token_head
    assert not REFERENCE.limited
    hc = REFERENCE.head_config(["java", "python"])
    assert hc.languages == ["java", "python"] and Variant("c", "").head_config(["java"]).languages == []
    assert REFERENCE.control_codes == "offset" and hc.code_mode == "offset"
    prefix = Variant("p", "", head="linear", control_codes="prefix").head_config(["go"])
    assert prefix.uses_prefix_codes and prefix.languages == ["go"]
    from conba_research.ablation import VARIANTS

    by_name = {v.name: v for v in VARIANTS}
    assert not by_name["no_state_path"].use_state and not by_name["no_state_path"].use_feedback
    assert by_name["no_feedback"].use_state and not by_name["no_feedback"].use_feedback


def test_pooled_states_give_the_same_embeddings_for_mean_pooling_heads():
    from types import SimpleNamespace

    from conba.heads import HeadConfig, build_head
    from conba_research.states import embed_states, head_reads_pooled_mean, pooled_states

    torch.manual_seed(0)
    lens = [3, 7, 1, 5]
    offsets = torch.tensor([0, *np.cumsum(lens).tolist()])
    ts = TokenStates(torch.randn(sum(lens), 8).half(), offsets)
    langs = ["java", "python", "java", "cpp"]
    for cfg in (HeadConfig(kind="conba", dim=8, languages=["java", "python"]), HeadConfig(kind="linear", dim=8),
                HeadConfig(kind="none", dim=8)):
        head = build_head(cfg)
        model = SimpleNamespace(head=head, dim=8, device=torch.device("cpu"))
        assert head_reads_pooled_mean(head)
        full = embed_states(model, ts, langs, batch_size=2)
        pooled = embed_states(model, pooled_states(ts), langs, batch_size=2)
        np.testing.assert_allclose(full, pooled, atol=1e-5)
    assert not head_reads_pooled_mean(build_head(HeadConfig(kind="conba-scan", dim=8)))
    assert not head_reads_pooled_mean(build_head(HeadConfig(kind="linear", dim=8, pooling="cls")))
