"""conba.train.checkpoint: round trip, foreign settings refused, atomic against a crash mid-write."""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest
import torch

from conba.errors import FormatError
from conba.train.checkpoint import (
    CheckpointMismatch,
    check_checkpoint,
    find_checkpoint,
    load_checkpoint,
    remove_checkpoint,
    save_checkpoint,
)
from conba.train.loop import optimizer_step

KEY = {"lr": 0.1, "layers": [1, 3]}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 3)
        self.norm = torch.nn.BatchNorm1d(3)  # a buffer (running mean) besides the parameters
        self.tied = self.body  # the same weights under two names, as a tied decoder has

    def forward(self, x):
        return self.norm(self.body(x))


def _trained(seed: int = 0, steps: int = 2):
    torch.manual_seed(seed)
    net = Net()
    opt = torch.optim.AdamW(net.parameters(), lr=0.1, betas=(0.8, 0.9))
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(steps):
        optimizer_step(opt, net(torch.randn(5, 4)).square().mean(), list(net.parameters()))
        sched.step()
    return net, opt, sched


def _fresh():
    torch.manual_seed(123)
    net = Net()
    opt = torch.optim.AdamW(net.parameters(), lr=0.1, betas=(0.8, 0.9))
    return net, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)


def test_round_trip_restores_weights_optimizer_scheduler_rng_and_state(tmp_path):
    net, opt, sched = _trained()
    random.seed(7)
    np.random.seed(7)
    save_checkpoint(tmp_path / "ck", KEY, {"step": 2, "history": [{"loss": 0.5}]}, modules={"net": net},
                    optimizer=opt, scheduler=sched)
    expected = (torch.rand(3), random.random(), np.random.rand())
    net2, opt2, sched2 = _fresh()
    state = load_checkpoint(tmp_path / "ck", {"layers": [1, 3], "lr": 0.1}, modules={"net": net2},
                            optimizer=opt2, scheduler=sched2)
    assert state == {"step": 2, "history": [{"loss": 0.5}]}
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), net2.state_dict().values()))
    assert (torch.equal(torch.rand(3), expected[0]) and random.random() == expected[1]
            and np.random.rand() == expected[2])
    assert sched2.state_dict() == sched.state_dict() and opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert opt2.param_groups[0]["betas"] == (0.8, 0.9)
    # the next step is the same as the uninterrupted run's
    x = torch.randn(5, 4)
    for n, o in ((net, opt), (net2, opt2)):
        optimizer_step(o, n(x).square().mean(), list(n.parameters()))
    assert all(torch.equal(a, b) for a, b in zip(net.parameters(), net2.parameters()))
    assert not (tmp_path / "ck.tmp").exists() and not (tmp_path / "ck.old").exists()


def test_trainable_only_saves_and_checks_just_the_trainable_parameters(tmp_path):
    net, opt, _ = _trained()
    net.body.bias.requires_grad_(False)
    save_checkpoint(tmp_path / "ck", "k", {}, modules={"m": net}, trainable_only=True)
    from safetensors.torch import load_file

    names = {n for n in load_file(str(tmp_path / "ck" / "tensors.safetensors")) if n.startswith("m.")}
    assert names == {"m.body.weight", "m.norm.weight", "m.norm.bias"}
    net2, _, _ = _fresh()
    net2.body.bias.requires_grad_(False)
    load_checkpoint(tmp_path / "ck", "k", modules={"m": net2}, trainable_only=True)
    assert torch.equal(net2.body.weight, net.body.weight) and not torch.equal(net2.body.bias, net.body.bias)
    net3, _, _ = _fresh()  # bias trainable here: the saved set does not match
    with pytest.raises(FormatError, match="trainable parameters"):
        load_checkpoint(tmp_path / "ck", "k", modules={"m": net3}, trainable_only=True)


def test_no_checkpoint_is_none_and_foreign_settings_or_format_are_refused(tmp_path):
    net, opt, _ = _fresh()
    assert load_checkpoint(tmp_path / "ck", KEY, modules={"net": net}, optimizer=opt) is None
    save_checkpoint(tmp_path / "ck", KEY, {"step": 1}, modules={"net": net}, optimizer=opt)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    other, _, _ = _trained(seed=1)
    with pytest.raises(CheckpointMismatch, match="different settings; use --restart"):
        load_checkpoint(tmp_path / "ck", "another key", modules={"net": other})  # not a mapping: no names
    with pytest.raises(CheckpointMismatch) as info:
        check_checkpoint(tmp_path / "ck", {**KEY, "lr": 0.2, "extra": [1, 2]})
    assert info.value.settings == ("extra", "lr")
    assert "different settings (extra: unset saved, [1, 2] now; lr: 0.1 saved, 0.2 now); use --restart" \
        in str(info.value)
    with pytest.raises(RuntimeError, match="different settings"):  # a UsageError: the CLI prints one line
        load_checkpoint(tmp_path / "ck", {**KEY, "lr": 0.2}, modules={"net": other})
    assert check_checkpoint(tmp_path / "ck", KEY) and not check_checkpoint(tmp_path / "none", KEY)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    legacy = tmp_path / "legacy"  # the pre-merge layout: state.json with a signature, no "checkpoint" entry
    legacy.mkdir()
    (legacy / "state.json").write_text(json.dumps({"step": 1, "signature": KEY}))
    with pytest.raises(CheckpointMismatch, match="another conba version"):
        load_checkpoint(legacy, KEY, modules={"net": net})
    with pytest.raises(ValueError, match="reserved key"):
        save_checkpoint(tmp_path / "x", KEY, {"checkpoint": 1}, modules={})
    with pytest.raises(ValueError, match="not JSON-able"):
        save_checkpoint(tmp_path / "x", KEY, {"when": object()}, modules={})


def test_a_crash_while_writing_leaves_the_old_checkpoint_loadable(tmp_path, monkeypatch):
    import safetensors.torch

    net, opt, _ = _trained()
    save_checkpoint(tmp_path / "ck", KEY, {"step": 1}, modules={"net": net}, optimizer=opt)
    old_weights = net.body.weight.detach().clone()
    with torch.no_grad():
        net.body.weight.add_(1.0)

    def half_written(tensors, filename, metadata=None):
        with open(filename, "wb") as f:
            f.write(b"\x00garbage")
        raise KeyboardInterrupt

    monkeypatch.setattr(safetensors.torch, "save_file", half_written)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(tmp_path / "ck", KEY, {"step": 2}, modules={"net": net}, optimizer=opt)
    monkeypatch.undo()
    net2, opt2, _ = _fresh()
    assert load_checkpoint(tmp_path / "ck", KEY, modules={"net": net2}, optimizer=opt2) == {"step": 1}
    assert torch.equal(net2.body.weight, old_weights)
    # the next save clears the half-written folder
    save_checkpoint(tmp_path / "ck", KEY, {"step": 2}, modules={"net": net}, optimizer=opt)
    assert load_checkpoint(tmp_path / "ck", KEY, modules={"net": net2}) == {"step": 2}


def test_a_crash_between_the_renames_falls_back_to_the_old_folder(tmp_path, monkeypatch):
    net, opt, _ = _trained()
    ck = tmp_path / "ck"
    save_checkpoint(ck, KEY, {"step": 1}, modules={"net": net}, optimizer=opt)
    real, calls = os.replace, []

    def crash_on_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # NAME is already NAME.old, NAME.tmp not yet NAME
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(ck, KEY, {"step": 2}, modules={"net": net}, optimizer=opt)
    monkeypatch.undo()
    assert not ck.exists() and find_checkpoint(ck) == tmp_path / "ck.old"
    assert load_checkpoint(ck, KEY, modules={"net": net}, optimizer=opt) == {"step": 1}
    # a save now must keep ck.old until the new folder is in place, then tidy up
    save_checkpoint(ck, KEY, {"step": 3}, modules={"net": net}, optimizer=opt)
    assert load_checkpoint(ck, KEY, modules={"net": net}) == {"step": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
    remove_checkpoint(ck)
    assert find_checkpoint(ck) is None and not any(tmp_path.iterdir())


def test_a_checkpoint_from_before_the_window_rename_restores_the_window_head(tmp_path):
    """ConbaModel's window head was once called fragment_head: a distillation checkpoint saved then resumes."""
    class Old(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fragment_head = torch.nn.Linear(2, 2)

    class New(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.window_head = torch.nn.Linear(2, 2)

    old, new = Old(), New()
    save_checkpoint(tmp_path / "ck", "k", {}, modules={"m": old}, trainable_only=True)
    load_checkpoint(tmp_path / "ck", "k", modules={"m": new}, trainable_only=True)
    assert torch.equal(new.window_head.weight, old.fragment_head.weight)
    full = New()
    save_checkpoint(tmp_path / "full", "k", {}, modules={"m": old})
    load_checkpoint(tmp_path / "full", "k", modules={"m": full})
    assert torch.equal(full.window_head.bias, old.fragment_head.bias)
