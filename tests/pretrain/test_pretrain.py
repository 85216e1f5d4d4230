"""Continued pretraining: masking statistics, RTD labels, heads, corpus, config, the loop, resume, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from conba.pretrain import PretrainConfig
from conba.pretrain.masking import IGNORE, mask_tokens, replaced_token_labels, special_tokens_mask


@pytest.fixture(scope="module")
def backbone(tmp_path_factory) -> Path:
    """The tiny BERT with a tokenizer that knows its vocabulary (transformers 4 and 5)."""
    from transformers import BertTokenizerFast

    from helpers import VOCAB, make_tiny_backbone

    folder = make_tiny_backbone(tmp_path_factory.mktemp("bb"))
    tok = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    if len(tok) < len(VOCAB):  # transformers >= 5 takes the vocabulary as `vocab`
        tok = BertTokenizerFast(vocab=str(folder / "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture()
def data(tmp_path) -> Path:
    from helpers import make_tiny_dataset

    return make_tiny_dataset(tmp_path / "code.jsonl", copies=3)


def _cfg(backbone, data, out, **kw) -> PretrainConfig:
    base = dict(data=[str(data)], out=str(out), backbone=str(backbone), steps=4, batch_size=4, max_length=32,
                checkpoint_every=2, device="cpu")
    return PretrainConfig(**{**base, **kw})


# ---------------------------------------------------------------- masking
def test_mlm_masking_follows_15_percent_and_80_10_10():
    g = torch.Generator().manual_seed(0)
    vocab, mask_id = 1000, 4
    ids = torch.randint(5, vocab, (400, 250), generator=g)
    attn = torch.ones_like(ids)
    attn[:, 200:] = 0  # padding
    ids[:, 0], ids[:, 199] = 2, 3  # [CLS] ... [SEP]
    special = special_tokens_mask(ids, attn, [0, 1, 2, 3, 4])
    masked, labels, chosen = mask_tokens(ids, special, vocab_size=vocab, mask_token_id=mask_id, generator=g)
    assert not chosen[special].any()  # never special tokens or padding
    n_real = int((~special).sum())
    assert chosen.sum() / n_real == pytest.approx(0.15, abs=0.005)
    assert torch.equal(labels[chosen], ids[chosen]) and bool((labels[~chosen] == IGNORE).all())
    assert torch.equal(masked[~chosen], ids[~chosen])
    m = masked[chosen]
    orig = ids[chosen]
    frac_mask = float((m == mask_id).float().mean())
    frac_keep = float((m == orig).float().mean())
    frac_random = 1.0 - frac_mask - frac_keep
    assert frac_mask == pytest.approx(0.8, abs=0.01)
    assert frac_random == pytest.approx(0.1, abs=0.01)
    assert frac_keep == pytest.approx(0.1, abs=0.01)


def test_masking_is_dynamic_and_seeded():
    ids = torch.randint(5, 100, (8, 64))
    special = torch.zeros_like(ids, dtype=torch.bool)

    def draw(seed):
        return mask_tokens(ids, special, vocab_size=100, mask_token_id=4, generator=torch.Generator().manual_seed(seed))

    assert torch.equal(draw(1)[2], draw(1)[2])
    assert not torch.equal(draw(1)[2], draw(2)[2])  # every step masks other tokens
    with pytest.raises(ValueError, match="shape"):
        mask_tokens(ids, special[:, :10], vocab_size=100, mask_token_id=4)


def test_rtd_labels_count_a_reproduced_token_as_original():
    ids = torch.tensor([[2, 10, 11, 12, 3], [2, 20, 21, 3, 0]])
    chosen = torch.tensor([[False, True, False, True, False], [False, True, True, False, False]])
    corrupted, labels = replaced_token_labels(ids, chosen, ids[chosen].clone())  # generator got them all right
    assert torch.equal(corrupted, ids) and int(labels.sum()) == 0
    sampled = torch.tensor([10, 99, 77, 21])  # right, wrong, wrong, right
    corrupted, labels = replaced_token_labels(ids, chosen, sampled)
    assert labels.tolist() == [[0, 0, 0, 1, 0], [0, 1, 0, 0, 0]]
    assert corrupted[0, 3] == 99 and corrupted[1, 1] == 77 and corrupted[1, 2] == 21
    with pytest.raises(ValueError, match="chosen positions"):
        replaced_token_labels(ids, chosen, sampled[:2])


def test_mlm_head_is_tied_to_the_embeddings_and_loss_handles_no_mask():
    from conba.pretrain.mlm import MLMHead, mlm_loss

    emb = torch.nn.Embedding(50, 8)
    head = MLMHead(8, emb)
    assert all(p is not emb.weight for p in head.parameters())  # shared, not owned
    h = torch.randn(3, 8)
    before = head(h)
    with torch.no_grad():
        emb.weight.mul_(2.0)  # not add_: a constant shift vanishes on the LayerNorm-ed (zero-mean) input
    assert not torch.allclose(before, head(h))
    loss, logits = mlm_loss(head, torch.randn(2, 5, 8, requires_grad=True), torch.full((2, 5), IGNORE))
    assert loss.item() == 0.0 and logits.shape == (0, 50) and loss.requires_grad


def test_generator_shares_the_backbone_embeddings(backbone):
    from conba.encoder.backbone import load_hf
    from conba.pretrain.rtd import Generator, generator_shape

    assert generator_shape(384, 0.25) == (96, 1) and generator_shape(768, 0.25) == (192, 3)
    _, model = load_hf(str(backbone))
    gen = Generator(model, size=0.5, layers=1)
    names = [n for n, _ in gen.named_parameters()]
    assert not any("word_embeddings" in n for n in names)  # embeddings belong to the backbone only
    hidden = gen(torch.tensor([[2, 50, 51, 3]]), torch.ones(1, 4, dtype=torch.long))
    assert hidden.shape == (1, 4, gen.width) and gen.width == 16


# ---------------------------------------------------------------- corpus and config
def test_corpus_from_folders_and_jsonl(tmp_path, backbone):
    from conba.encoder.backbone import load_hf
    from conba.pretrain.corpus import read_texts, windows

    src = tmp_path / "repo"
    src.mkdir()
    (src / "a.py").write_text("def add(a, b):\n    return a + b\n" * 20)
    (src / "B.java").write_text("class B { int f() { return 1; } }\n")
    (src / "notes.txt").write_text("not code")
    (src / "blob.py").write_bytes(b"\0\1\2binary")
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"code": "print(1)"}) + "\n\n" + json.dumps({"code": "x = 2"}) + "\n")
    texts = read_texts([str(src), str(plain)])
    assert len(texts) == 4 and "print(1)" in texts
    tok, _ = load_hf(str(backbone))
    wins = windows(texts, tok, max_length=16)
    assert all(len(w) <= 16 and w[0] == tok.cls_token_id and w[-1] == tok.sep_token_id for w in wins)
    assert len(windows(texts, tok, max_length=16, max_windows=1)) < len(wins)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x"}\n')
    with pytest.raises(ValueError, match="'code'"):
        read_texts([str(bad)])
    with pytest.raises(FileNotFoundError):
        read_texts([str(tmp_path / "missing")])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no code"):
        read_texts([str(empty)])


def test_config_validation_and_round_trip(tmp_path):
    good = PretrainConfig(data=["x.jsonl"])
    good.validate()
    good.save(tmp_path / "c.json")
    assert PretrainConfig.load(tmp_path / "c.json") == good
    with pytest.raises(ValueError, match="unknown"):
        PretrainConfig.from_dict({"data": [], "nonsense": 1})
    for bad in (dict(data=[]), dict(objective="gan"), dict(steps=0), dict(mask_prob=0.0), dict(mask_prob=1.2),
                dict(max_length=4), dict(mask_token_prob=0.95, random_token_prob=0.1), dict(generator_size=0.0),
                dict(lr=0.0), dict(warmup=1.0), dict(rtd_weight=-1.0)):
        with pytest.raises(ValueError):
            PretrainConfig(**{"data": ["x.jsonl"], **bad}).validate()


# ---------------------------------------------------------------- the loop
def _weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    from conba.encoder.backbone import nested_backbone

    return load_file(str(Path(nested_backbone(str(folder))) / "model.safetensors"))


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["mlm", "rtd", "both"])
def test_pretrain_writes_a_backbone_that_conba_train_accepts(backbone, data, tmp_path, objective):
    from conba.model import ConbaModel
    from conba.pretrain import pretrain

    out = pretrain(_cfg(backbone, data, tmp_path / "bb", objective=objective), progress=False, log=lambda m: None)
    for name in ("backbone/config.json", "backbone/model.safetensors", "pretrain_config.json",
                 "pretrain_history.json", "pretrain_curves.png", "pretrain_result.json"):
        assert (out / name).exists(), name
    assert not (out / ".checkpoint").exists()
    new, old = _weights(out), _weights(backbone)
    assert any(not torch.equal(new[k], old[k]) for k in old if k in new)  # the backbone was trained
    history = json.loads((out / "pretrain_history.json").read_text())
    expected = {"mlm": {"mlm"}, "rtd": {"gen", "disc", "disc_acc"}, "both": {"mlm", "gen", "disc"}}[objective]
    assert expected <= set(history[-1])
    model = ConbaModel.create(str(out))  # what `conba train --backbone OUT` does
    assert model.encode(["def add(a, b): return a + b"]).shape == (1, 32)


@pytest.mark.slow
def test_pretrain_resumes_exactly_and_refuses_a_foreign_folder(backbone, data, tmp_path, monkeypatch):
    from conba.pretrain import pretrain
    from conba.pretrain.trainer import Pretrainer

    straight = pretrain(_cfg(backbone, data, tmp_path / "a"), progress=False, log=lambda m: None)
    original = Pretrainer.train_step

    def crash_at_3(self, step):
        if step == 3:
            raise KeyboardInterrupt
        return original(self, step)

    monkeypatch.setattr(Pretrainer, "train_step", crash_at_3)
    with pytest.raises(KeyboardInterrupt):
        pretrain(_cfg(backbone, data, tmp_path / "b"), progress=False, log=lambda m: None)
    assert json.loads((tmp_path / "b" / ".checkpoint" / "state.json").read_text())["step"] == 2
    monkeypatch.setattr(Pretrainer, "train_step", original)
    logs: list[str] = []
    resumed = pretrain(_cfg(backbone, data, tmp_path / "b"), progress=False, log=logs.append)
    assert any("resumed at step 2" in m for m in logs)
    a, b = _weights(straight), _weights(resumed)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    # finished: same settings is a no-op, other settings need --restart
    pretrain(_cfg(backbone, data, tmp_path / "b"), progress=False, log=logs.append)
    assert "already finished" in logs[-1]
    with pytest.raises(RuntimeError, match="other settings"):
        pretrain(_cfg(backbone, data, tmp_path / "b", steps=5), progress=False, log=lambda m: None)
    pretrain(_cfg(backbone, data, tmp_path / "b", steps=5), restart=True, progress=False, log=lambda m: None)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x.txt").write_text("mine")
    with pytest.raises(RuntimeError, match="not a pretraining run"):
        pretrain(_cfg(backbone, data, foreign), progress=False, log=lambda m: None)


@pytest.mark.slow
def test_without_a_bar_each_checkpoint_logs_a_line(backbone, data, tmp_path):
    from conba.pretrain import pretrain

    lines: list[str] = []
    pretrain(_cfg(backbone, data, tmp_path / "a", checkpoint_every=1), progress=False, log=lines.append)
    steps = [ln for ln in lines if ln.endswith("checkpoint saved")]
    # steps 1-3 of 4: the last step saves the result, not a checkpoint
    assert [ln.split(", ")[1].split(":")[0] for ln in steps] == ["batch 1/4", "batch 2/4", "batch 3/4"], lines
    assert steps[0].startswith("epoch 1/") and "loss " in steps[0] and "lr " in steps[0]
    lines.clear()
    pretrain(_cfg(backbone, data, tmp_path / "b", checkpoint_every=1), progress=True, log=lines.append)
    assert not [ln for ln in lines if ln.endswith("checkpoint saved")]  # the bar shows it instead


@pytest.mark.slow
def test_cli_pretrain(backbone, data, tmp_path):
    from click.testing import CliRunner

    from conba.cli.main import cli

    runner = CliRunner()
    res = runner.invoke(cli, ["pretrain", str(data), "-o", str(tmp_path / "o"), "--backbone", str(backbone),
                              "--steps", "2", "-b", "2", "--max-length", "24", "--device", "cpu", "--objective", "rtd",
                              "--generator-layers", "1"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 2 and summary["objective"] == "rtd" and Path(summary["out"]).is_dir()
    bad = runner.invoke(cli, ["pretrain", str(data), "-o", str(tmp_path / "p"), "--objective", "gan"])
    assert bad.exit_code == 2
    missing = runner.invoke(cli, ["pretrain", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "q"),
                                  "--backbone", str(backbone)])
    assert missing.exit_code == 1 and "no such file" in missing.output
    help_text = runner.invoke(cli, ["pretrain", "--help"]).output
    assert "Examples" in help_text and "--objective" in help_text


def test_a_crash_while_the_backbone_is_swapped_keeps_the_previous_one(backbone, tmp_path, monkeypatch):
    """`conba pretrain -o OUT` swaps OUT/backbone with utils.io.replace_dir: killed between its two
    renames (faked by failing the second os.replace), OUT still loads, as the previous backbone."""
    import shutil

    from conba.encoder.backbone import load_hf
    from conba.utils import io

    out = tmp_path / "out"
    shutil.copytree(backbone, out / "backbone")
    before = _weights(out)
    new = tmp_path / "new"
    shutil.copytree(backbone, new)
    (new / "model.safetensors").write_bytes(b"not the previous weights")
    calls = []
    real = io.os.replace

    def crash_on_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies between "backbone -> backbone.old" and "new -> backbone"
        return real(src, dst)

    monkeypatch.setattr(io.os, "replace", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        io.replace_dir(new, out / "backbone")
    monkeypatch.undo()
    assert not (out / "backbone").exists() and (out / "backbone.old").is_dir()
    _, model = load_hf(str(out))  # `--backbone OUT` finds backbone.old
    assert all(torch.equal(before[k], v) for k, v in _weights(out).items())
    assert model is not None


def test_max_windows_per_file_keeps_its_file_name():
    """``max_windows_per_file`` is saved (and signed) as ``max_chunks_per_file``, its file-format name, so runs
    saved before resume; both names load."""
    from conba.pretrain.config import PretrainConfig

    cfg = PretrainConfig(data=["x"], max_windows_per_file=3)
    assert cfg.to_dict()["max_chunks_per_file"] == 3 and "max_windows_per_file" not in cfg.run_signature()
    assert PretrainConfig.from_dict(cfg.to_dict()) == cfg
    assert PretrainConfig.from_dict({"data": ["x"], "max_windows_per_file": 3}) == cfg
