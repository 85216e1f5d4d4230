"""conba-scan: the vectorised selective scan against the sequential loop, and the S6 head math."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conba.heads import HeadConfig, build_head, selective_scan, selective_scan_reference


def _random_scan_inputs(b: int, l: int, d: int, n: int, seed: int, masked: bool):
    g = torch.Generator().manual_seed(seed)
    deltaA = torch.rand(b, l, d, n, generator=g, dtype=torch.float64) * 0.98 + 0.01
    deltaBx = torch.randn(b, l, d, n, generator=g, dtype=torch.float64)
    C = torch.randn(b, l, n, generator=g, dtype=torch.float64)
    if masked:  # padding: ΔA = 1, ΔB·x = 0 at random positions
        pad = torch.rand(b, l, generator=g) < 0.3
        deltaA[pad] = 1.0
        deltaBx[pad] = 0.0
    return deltaA, deltaBx, C


@pytest.mark.parametrize("shape", [(1, 1, 3, 2), (2, 2, 3, 4), (2, 5, 3, 4), (1, 8, 2, 3), (3, 13, 4, 4)])
@pytest.mark.parametrize("masked", [False, True])
def test_scan_equals_sequential_reference(shape: tuple[int, int, int, int], masked: bool) -> None:
    args = _random_scan_inputs(*shape, seed=sum(shape) + masked, masked=masked)
    fast, slow = selective_scan(*args), selective_scan_reference(*args)
    assert fast.shape == slow.shape == shape[:3]
    torch.testing.assert_close(fast, slow, rtol=0, atol=1e-9)


def test_scan_hand_example() -> None:
    # d = n = 1: h = [1, 0.5·1 + 2, 0.25·2.5 + 0] = [1, 2.5, 0.625]; y = h · C
    deltaA = torch.tensor([0.9, 0.5, 0.25], dtype=torch.float64).view(1, 3, 1, 1)
    deltaBx = torch.tensor([1.0, 2.0, 0.0], dtype=torch.float64).view(1, 3, 1, 1)
    C = torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64).view(1, 3, 1)
    expected = torch.tensor([[[1.0], [5.0], [-0.625]]], dtype=torch.float64)
    torch.testing.assert_close(selective_scan(deltaA, deltaBx, C), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(selective_scan_reference(deltaA, deltaBx, C), expected, rtol=0, atol=1e-12)


def test_ssm_matches_a_per_position_loop() -> None:
    torch.manual_seed(3)
    head = build_head(HeadConfig(kind="conba-scan", dim=8, state_dim=4)).double()
    b, l, d, n, r = 2, 7, 8, 4, head.config.resolved_dt_rank
    x = torch.randn(b, l, d, dtype=torch.float64)
    mask = torch.tensor([[1] * 7, [0, 0, 1, 1, 1, 1, 0]], dtype=torch.bool)
    A = -torch.exp(head.A_log)
    torch.testing.assert_close(A[0], -torch.arange(1, n + 1, dtype=torch.float64))  # S4D-real init
    expected = torch.zeros(b, l, d, dtype=torch.float64)
    with torch.no_grad():
        for i in range(b):
            h = torch.zeros(d, n, dtype=torch.float64)
            for t in range(l):
                proj = head.x_proj.weight @ x[i, t]
                delta = F.softplus(head.dt_proj.weight @ proj[:r] + head.dt_proj.bias)
                Bt, Ct = proj[r:r + n], proj[r + n:]
                if mask[i, t]:
                    h = torch.exp(delta[:, None] * A) * h + (delta * x[i, t])[:, None] * Bt[None, :]
                expected[i, t] = h @ Ct + head.D * x[i, t]
        torch.testing.assert_close(head.ssm(x, mask), expected, rtol=0, atol=1e-10)


def test_switches_change_exactly_their_term() -> None:
    torch.manual_seed(4)
    cfg = dict(kind="conba-scan", dim=8, out_dim=5, state_dim=4)
    full = build_head(HeadConfig(**cfg)).double()
    no_ctrl = build_head(HeadConfig(**cfg, use_control=False)).double()
    no_fb = build_head(HeadConfig(**cfg, use_feedback=False)).double()
    assert {"feedback_weight", "A_log", "D", "x_proj.weight"}.isdisjoint(dict(no_fb.named_parameters()))
    for dst in (no_ctrl, no_fb):
        dst.load_state_dict({k: v for k, v in full.state_dict().items() if k in dst.state_dict()})
    x, mask = torch.randn(2, 5, 8, dtype=torch.float64), torch.tensor([[1] * 5, [1, 1, 1, 0, 0]])
    with torch.no_grad():
        full.control_weight.copy_(torch.linspace(0.5, 2.0, 8))
        assert not torch.allclose(full(x, mask), no_ctrl(x, mask))
        no_fb.control_weight.copy_(full.control_weight)
        assert not torch.allclose(full(x, mask), no_fb(x, mask))
        full.feedback_weight.zero_()
        torch.testing.assert_close(full(x, mask), no_fb(x, mask), rtol=0, atol=1e-12)
        full.feedback_weight.fill_(1.0)
        full.control_weight.fill_(1.0)
        torch.testing.assert_close(full(x, mask), no_ctrl(x, mask), rtol=0, atol=1e-12)
