import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conba.encoder.sdtp.pruned import pruned_states
from conba.engine.batching import pad_batch
from conba.heads import HeadConfig
from conba.model import ConbaModel, ModelError, load_model
from conba.prune import PruneConfig, PruneModule, keep_score, load_pruner, parse_layers, save_pruner
from conba.prune.saliency import SaliencyHooks, batch_saliency, importance
from conba.prune.soft import soft_states
from conba.train.losses import in_batch_loss

CODES = ["def add(a, b):\n    return a + b\n" * 4, "x = 1", "static int add(int a, int b) { return a + b; }",
         "function biggest(xs) { return max(xs); }" * 3]


@pytest.fixture(scope="module")
def deep_backbone(tmp_path_factory):
    from helpers import make_tiny_backbone

    return make_tiny_backbone(tmp_path_factory.mktemp("bb4"), layers=4)


@pytest.fixture()
def model(deep_backbone):
    torch.manual_seed(0)
    return ConbaModel.create(str(deep_backbone), HeadConfig(kind="linear", languages=["python", "java"]))


def _pruner(ratio=0.5, layers=(1, 3)):
    torch.manual_seed(1)
    return PruneModule(PruneConfig(layers=list(layers), keep_ratio=ratio, dim=32, num_layers=4))


@pytest.mark.slow
def test_own_layer_loop_equals_hf_forward(model):
    """encode() runs the layers itself (broadcast mask, no pooler); it must equal the HF forward."""
    from conba.engine.batching import length_sorted_batches, tokenize_ids

    ids = tokenize_ids(model.backbone, CODES)
    langs = ["python", "java", "java", "python"]
    ref = np.zeros((len(CODES), model.dim), dtype=np.float32)
    with torch.no_grad():
        for batch in length_sorted_batches(ids, 2, 0):
            lang = model.head.language_ids([langs[i] for i in batch.index])
            ref[batch.index] = model.embed_tokens(batch.input_ids, batch.attention_mask, lang).numpy()
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    assert model._own_loop()
    assert np.allclose(model.encode(CODES, languages=langs, batch_size=2), ref, atol=1e-6)


@pytest.mark.slow
def test_keep_ratio_one_equals_exact(model):
    exact = model.encode(CODES)
    model.pruner = _pruner(ratio=1.0)
    assert np.allclose(model.encode(CODES), exact, atol=1e-6)


@pytest.mark.slow
def test_pruning_changes_output_and_off_reproduces_exact(model, tmp_path):
    exact = model.encode(CODES)
    model.pruner = _pruner(ratio=0.3)
    pruned = model.encode(CODES)
    assert not np.allclose(pruned, exact, atol=1e-4)
    model.save(tmp_path / "m")
    assert (tmp_path / "m" / "prune" / "prune.safetensors").exists()
    on = load_model(tmp_path / "m")
    assert on.pruner is not None and on.use_pruning
    assert np.array_equal(on.encode(CODES), pruned)
    off = load_model(tmp_path / "m", prune=False)
    assert np.array_equal(off.encode(CODES), exact)  # pruning off: the exact embeddings, bit for bit
    import conba

    assert np.array_equal(conba.load_model(str(tmp_path / "m"), prune=False).encode(CODES), exact)


def test_pruned_states_shrink_tokens(model):
    ids, mask = pad_batch([list(range(5, 45)), list(range(5, 25))], 0)
    pr = _pruner(ratio=0.5)
    out = pruned_states(model.backbone, pr, ids, mask)
    # 40 tokens -> 20 (ratio 0.5) -> 10 ... but the floor is 4 first + ceil(10%) tail
    assert out.hidden.shape[1] == int(out.mask.sum(1).max()) < 40
    assert out.mask.sum(1).tolist()[0] == 10
    assert out.exit_sum is None


@pytest.mark.slow
def test_pool_pruned_counts_every_token(model):
    """With pool_pruned, the pooled mean covers the survivors (last layer) and the pruned tokens (at the
    layer they left)."""
    from conba.encoder.layers import embed_input, hard_mask, run_layer
    from conba.encoder.sdtp.mask import hard_keep_indices
    from conba.encoder.sdtp.pruned import embed_states

    ids, mask = pad_batch([list(range(5, 45)), list(range(5, 25))], 0)
    pr = _pruner(ratio=0.5, layers=(3,))
    pr.config.pool_pruned = True
    out = pruned_states(model.backbone, pr, ids, mask)
    assert out.n_tokens.tolist() == [40, 20]
    with torch.no_grad():
        h = embed_input(model.backbone, ids)
        for i in range(3):
            h = run_layer(model.backbone.layers[i], h, hard_mask(mask, h.dtype))
        index, new_mask = hard_keep_indices(keep_score(pr.logits(3, h)), mask, 0.5, 4, 0.1)
    expected = []
    for r in range(2):
        kept = set(index[r][new_mask[r]].tolist())
        expected.append(sum(h[r, j] for j in range(int(mask[r].sum())) if j not in kept))
    assert torch.allclose(out.exit_sum, torch.stack(expected), atol=1e-5)
    model.pruner = pr
    kept_sum = (out.hidden * out.mask.unsqueeze(-1)).sum(1)
    want = model.head((kept_sum + out.exit_sum) / out.n_tokens.unsqueeze(-1), None, None)
    assert torch.allclose(embed_states(model, out, None), want, atol=1e-6)
    pooled_on = model.encode(CODES)
    pr.config.pool_pruned = False
    assert not np.allclose(model.encode(CODES), pooled_on, atol=1e-4)


def test_save_without_pruner_removes_old_folder(model, tmp_path):
    model.pruner = _pruner()
    model.save(tmp_path / "m")
    model.pruner = None
    model.save(tmp_path / "m")
    assert not (tmp_path / "m" / "prune").exists()


def test_corrupt_prune_folder_is_a_model_error(model, tmp_path):
    model.pruner = _pruner()
    model.save(tmp_path / "m")
    (tmp_path / "m" / "prune" / "prune.safetensors").write_bytes(b"junk")
    with pytest.raises(ModelError, match="SDTP"):
        load_model(tmp_path / "m")


def test_prune_config_roundtrip_and_validation(tmp_path):
    cfg = PruneConfig(layers=[2, 3], keep_ratio=0.6, dim=32, num_layers=4)
    pr = PruneModule(cfg)
    save_pruner(pr, tmp_path / "p")
    back = load_pruner(tmp_path / "p")
    assert back.config.layers == [2, 3] and back.config.keep_ratio == 0.6
    for (k, a), (_, b) in zip(pr.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), k
    for bad, msg in [({"layers": []}, "at least one"), ({"layers": [3, 2]}, "increasing"),
                     ({"layers": [4]}, "0..3"), ({"keep_ratio": 0.0}, "keep_ratio"),
                     ({"keep_tail": 1.0}, "keep_tail"), ({"keep_first": -1}, "keep_first")]:
        with pytest.raises(ValueError, match=msg):
            PruneConfig(**{"layers": [1], "dim": 32, "num_layers": 4, **bad}).validate()
    with pytest.raises(ValueError, match="unknown prune config key 'bogus'"):
        PruneConfig.from_dict({"layers": [1], "bogus": 1})
    (tmp_path / "p" / "prune_config.json").write_text(json.dumps({**cfg.to_dict(), "dim": 16}))
    with pytest.raises(ValueError, match="do not match|corrupt"):
        load_pruner(tmp_path / "p")
    with pytest.raises(FileNotFoundError):
        load_pruner(tmp_path / "nowhere")


def test_parse_layers():
    assert parse_layers("2,3, 5") == [2, 3, 5]
    assert parse_layers("2-4") == [2, 3, 4]
    for bad in ("", "a", "4-2"):
        with pytest.raises(ValueError):
            parse_layers(bad)


def test_token_fraction():
    assert PruneConfig(layers=[2, 3, 4, 5], keep_ratio=0.5, num_layers=6).token_fraction() == pytest.approx(
        (1 + 1 + 0.5 + 0.25 + 0.125 + 0.0625) / 6)


@pytest.mark.slow
def test_saliency_hooks_match_manual_gradient(model):
    groups = [0, 1, 0, 1]
    ids, sal = batch_saliency(model, CODES, ["python", "java", "java", "python"], groups, [1, 3], 0.05)
    assert all(p.grad is None for p in model.parameters())  # no weight gradients were computed
    assert all(p.requires_grad for p in model.parameters())  # and the flags are restored
    input_ids, mask = pad_batch(ids, 0)
    bb = model.backbone
    h1 = bb.lower(input_ids, mask, 1).detach().requires_grad_(True)
    h3 = bb.run_layers(h1, mask, 1, 3)
    h3.retain_grad()
    out = bb.run_layers(h3, mask, 3, 4)
    lang = model.head.language_ids(["python", "java", "java", "python"])
    loss = in_batch_loss(model.head(out, mask.bool(), lang), torch.tensor(groups), 0.05)
    loss.backward()
    for layer, h in ((1, h1), (3, h3)):
        manual = (h * h.grad).sum(-1).detach()
        for row in range(len(ids)):
            assert np.allclose(sal[layer][row], manual[row, : len(ids[row])].numpy(), atol=1e-6)
    with pytest.raises(ValueError):
        SaliencyHooks(bb, [7])
    assert torch.equal(importance(torch.tensor([-2.0, 1.0]), "abs"), torch.tensor([2.0, 1.0]))
    with pytest.raises(ValueError, match="saliency mode"):
        importance(torch.zeros(2), "bogus")


def test_soft_pass_gradient_reaches_every_scorer(model):
    pr = _pruner()
    ids, mask = pad_batch([list(range(5, 30)), list(range(5, 20))], 0)
    from conba.encoder.layers import embed_input
    from conba.prune.soft import weighted_mean

    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        h = model.backbone.layers[0](embed_input(model.backbone, ids), attention_mask=None)
        h = h[0] if isinstance(h, tuple) else h
    sp = soft_states(model.backbone, pr, h, mask, start=1)
    assert set(sp.logits) == {1, 3}
    weighted_mean(sp.hidden, sp.weights).sum().backward()
    for name, p in pr.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
    with pytest.raises(ValueError, match="first pruning layer"):
        soft_states(model.backbone, pr, h, mask, start=2)


@pytest.mark.slow
def test_prune_train_cli_end_to_end(deep_backbone, tmp_path):
    from conba.cli.main import cli
    from helpers import make_tiny_dataset

    data = make_tiny_dataset(tmp_path / "train.jsonl", copies=3)
    out = tmp_path / "pruned"
    args = ["prune", "train", "-m", str(deep_backbone), "-o", str(out), "-d", str(data), "-n", "8",
            "-P", "4", "-K", "2", "-L", "1,3", "-r", "0.6", "--no-progress"]
    res = CliRunner().invoke(cli, args + ["-e", "1"])
    assert res.exit_code == 0, res.output
    m = load_model(out)
    assert m.pruner.config.layers == [1, 3] and m.pruner.config.keep_ratio == 0.6
    assert m.pruner.config.base_fingerprint == load_model(out, prune=False).fingerprint()
    assert len(m.pruner.config.info["history"]) == 1
    res = CliRunner().invoke(cli, args + ["-e", "2"])  # resumes: one more epoch
    assert res.exit_code == 0, res.output
    assert "resuming" in res.output
    assert len(load_model(out).pruner.config.info["history"]) == 2


@pytest.mark.slow
def test_without_a_bar_each_checkpoint_logs_a_line(deep_backbone, tmp_path):
    from conba.prune.train import train_pruner
    from conba.prune.train_config import PruneTrainConfig
    from helpers import make_tiny_dataset

    data = make_tiny_dataset(tmp_path / "train.jsonl", copies=3)
    cfg = PruneTrainConfig(model=str(deep_backbone), out=str(tmp_path / "a"), train=[str(data)], layers=[1, 3],
                           limit=16, groups_per_batch=4, per_group=2, epochs=1)
    lines: list[str] = []
    train_pruner(cfg, log=lines.append, progress=False)
    steps = [ln for ln in lines if ln.endswith("checkpoint saved")]  # a checkpoint after every batch
    assert [ln.split(": ")[1] for ln in steps] == ["epoch 1/1, batch 1/2", "epoch 1/1, batch 2/2"], lines
    assert steps[0].startswith("scorers: ") and "loss " in steps[0] and "lr 1.00e-03" in steps[0]
    lines.clear()
    train_pruner(PruneTrainConfig(**{**cfg.to_dict(), "out": str(tmp_path / "b")}), log=lines.append, progress=True)
    assert not [ln for ln in lines if ln.endswith("checkpoint saved")]  # the bar shows it instead


@pytest.mark.parametrize("extra,msg", [(["-r", "1.5"], "keep_ratio"), (["-L", "x"], "bad layer list"),
                                       (["-L", "9"], "pruning layers"), (["-d", "missing.jsonl"], "not found"),
                                       (["-n", "2"], "limit")])
def test_prune_train_cli_bad_input(deep_backbone, tmp_path, extra, msg):
    from conba.cli.main import cli
    from helpers import make_tiny_dataset

    data = make_tiny_dataset(tmp_path / "train.jsonl", copies=3)
    args = ["prune", "train", "-m", str(deep_backbone), "-o", str(tmp_path / "o"), "-d", str(data), "-n", "16",
            "-P", "4", "-K", "2", "-e", "1", "--no-progress"]
    res = CliRunner().invoke(cli, args + extra)
    assert res.exit_code != 0
    assert msg in res.output
    assert "Traceback" not in res.output


def test_other_model_types_fall_back_or_refuse(model, monkeypatch):
    from conba.encoder.layers import require_own_loop

    exact = model.encode(CODES)
    monkeypatch.setattr(model.backbone.model.config, "model_type", "deberta-v2")
    assert not model._own_loop()
    assert np.allclose(model.encode(CODES), exact, atol=1e-6)  # the HF forward, same vectors
    with pytest.raises(ValueError, match="BERT/RoBERTa-family"):
        require_own_loop(model.backbone, "SDTP pruning")


@pytest.mark.slow
def test_prune_train_reuses_saliency_for_a_layer_subset(deep_backbone, tmp_path):
    from conba.cli.main import cli
    from helpers import make_tiny_dataset

    data = make_tiny_dataset(tmp_path / "train.jsonl", copies=3)
    common = ["-m", str(deep_backbone), "-d", str(data), "-n", "8", "-P", "4", "-K", "2", "-e", "1", "--no-progress"]
    res = CliRunner().invoke(cli, ["prune", "train", "-o", str(tmp_path / "a"), "-L", "1,3", *common])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["prune", "train", "-o", str(tmp_path / "b"), "-L", "3", "--w-distill", "1",
                                   "--saliency-from", str(tmp_path / "a"), *common])
    assert res.exit_code == 0, res.output
    assert "reusing" in res.output and "distill=" in res.output
    assert load_model(tmp_path / "b").pruner.config.layers == [3]
    res = CliRunner().invoke(cli, ["prune", "train", "-o", str(tmp_path / "c"), "-L", "2",
                                   "--saliency-from", str(tmp_path / "a"), *common])
    assert res.exit_code != 0 and "cannot reuse" in res.output
    res = CliRunner().invoke(cli, ["prune", "train", "-o", str(tmp_path / "d"), "-L", "1",
                                   "--saliency-from", str(tmp_path / "nowhere"), *common])
    assert res.exit_code != 0 and "no saliency pass to reuse" in res.output


def test_retarget_pruner_reuses_scorers(model):
    from conba.encoder.sdtp.scorer import retarget_pruner

    pr = _pruner(0.5, (1, 3))
    new = retarget_pruner(pr, keep_ratio=0.8, layers=[3])
    assert new.config.layers == [3] and new.config.keep_ratio == 0.8
    assert torch.equal(new.scorers["3"].net[0].weight, pr.scorers["3"].net[0].weight)
    assert new.config.info["retargeted"][-1]["from"] == {"keep_ratio": 0.5, "layers": [1, 3]}
    assert pr.config.keep_ratio == 0.5  # the original is untouched
    model.pruner = new
    assert np.isfinite(model.encode(CODES)).all()
    with pytest.raises(ValueError, match=r"no trained scorer for layer\(s\) \[2\]"):
        retarget_pruner(pr, layers=[2, 3])
    with pytest.raises(ValueError, match="keep_ratio"):
        retarget_pruner(pr, keep_ratio=0.0)


def test_prune_set_cli(model, tmp_path):
    from conba.cli.main import cli

    model.pruner = _pruner(0.5, (1, 3))
    model.save(tmp_path / "m")
    before = load_model(tmp_path / "m").encode(CODES)
    res = CliRunner().invoke(cli, ["prune", "set", str(tmp_path / "m"), "-r", "1.0", "-L", "3"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["keep_ratio"] == 1.0 and out["layers"] == [3] and out["token_fraction"] == 1.0
    after = load_model(tmp_path / "m")
    assert after.pruner.config.keep_ratio == 1.0
    np.testing.assert_allclose(after.encode(CODES), load_model(tmp_path / "m", prune=False).encode(CODES), atol=1e-5)
    assert not np.allclose(before, after.encode(CODES), atol=1e-4)
    for args, msg in [([], "nothing to change"), (["-L", "2"], "no trained scorer"), (["-r", "2"], "keep_ratio")]:
        res = CliRunner().invoke(cli, ["prune", "set", str(tmp_path / "m"), *args])
        assert res.exit_code != 0 and msg in res.output and "Traceback" not in res.output, res.output
    res = CliRunner().invoke(cli, ["prune", "set", str(tmp_path), "-r", "0.5"])
    assert res.exit_code != 0 and "no prune/ folder" in res.output
    res = CliRunner().invoke(cli, ["prune", "set", str(tmp_path / "nope"), "-r", "0.5"])
    assert res.exit_code != 0 and "nope: no such model folder" in res.output


def test_shipped_default_pruner_matches_the_shipped_default_model():
    from conba.model import DEFAULT_MODEL_DIR, DEFAULT_SDTP_DIR

    pruner = load_pruner(DEFAULT_SDTP_DIR)
    shipped = json.loads((DEFAULT_MODEL_DIR / "conba_config.json").read_text())
    assert pruner.config.base_fingerprint == shipped["fingerprint"]
    assert pruner.config.layers == [3, 4, 5] and pruner.config.keep_ratio == 0.8
    assert pruner.config.num_layers == 6 and pruner.config.dim == 384


def test_prune_training_sees_the_models_input_view():
    from conba.data import CodeRecord
    from conba.prune.train import viewed_records

    code = "import os\n# add\ndef add(a, b):\n    return a + b  # sum\n"
    records = [CodeRecord(str(i), "g", "python", code) for i in range(3)]
    assert viewed_records(records, [0, 2], "raw", print) is records
    out = viewed_records(records, [0, 2], "code", lambda _msg: None)
    assert "import" not in out[0].code and "#" not in out[2].code and "def add" in out[0].code
    assert out[1].code == code and records[0].code == code  # unused rows and the input stay as they were
