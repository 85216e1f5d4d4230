"""conba-scan: the scans against the sequential loop, the S6 head math, and Mamba's initialisation."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from conba.heads import HeadConfig, build_head
from conba_research.heads import (
    linear_scan,
    linear_scan_reference,
    selective_scan,
    selective_scan_reference,
)
from conba_research.heads.scan import doubling_scan
from conba_research.heads.selective_scan import DT_MAX, DT_MIN


def _random_scan_inputs(b: int, l: int, d: int, n: int, seed: int, masked: bool, fast: float = 1.0):
    """log ΔA from exp(-fast·5)-ish to 1 (fast > 1 puts some decays far below e^-40), padding held."""
    g = torch.Generator().manual_seed(seed)
    log_deltaA = -fast * torch.rand(b, l, d, n, generator=g, dtype=torch.float64) * 5
    deltaBx = torch.randn(b, l, d, n, generator=g, dtype=torch.float64)
    C = torch.randn(b, l, n, generator=g, dtype=torch.float64)
    if masked:  # padding: ΔA = 1, ΔB·x = 0 at random positions
        pad = torch.rand(b, l, generator=g) < 0.3
        log_deltaA[pad] = 0.0
        deltaBx[pad] = 0.0
    return log_deltaA, deltaBx, C


@pytest.mark.parametrize("shape", [(1, 1, 3, 2), (2, 2, 3, 4), (2, 5, 3, 4), (1, 8, 2, 3), (3, 13, 4, 4),
                                   (2, 70, 3, 2)])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("fast", [0.01, 1.0, 20.0])
def test_scan_equals_sequential_reference(shape: tuple[int, int, int, int], masked: bool, fast: float) -> None:
    args = _random_scan_inputs(*shape, seed=sum(shape) + masked, masked=masked, fast=fast)
    fast_y, slow_y = selective_scan(*args), selective_scan_reference(*args)
    assert fast_y.shape == slow_y.shape == shape[:3]
    torch.testing.assert_close(fast_y, slow_y, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dtype, atol", [(torch.float64, 1e-9), (torch.float32, 1e-5)])
def test_linear_scan_long_sequences_against_the_loop(dtype: torch.dtype, atol: float) -> None:
    """l = 300 with padding, decays from e^-60 (several chunks) to 1 (no decay at all)."""
    g = torch.Generator().manual_seed(7)
    b, l, d = 3, 300, 5
    log_a = -torch.rand(b, l, d, generator=g, dtype=torch.float64) ** 4 * 60
    log_a[:, :, 0] = 0.0  # a plain running sum
    u = torch.randn(b, l, d, generator=g, dtype=torch.float64) * 0.1
    pad = torch.rand(b, l, generator=g) < 0.25
    pad[1, 250:] = True
    log_a[pad], u[pad] = 0.0, 0.0
    ref = linear_scan_reference(torch.exp(log_a), u)
    got = linear_scan(log_a.to(dtype), u.to(dtype))
    assert got.dtype == dtype
    torch.testing.assert_close(got.double(), ref, rtol=0, atol=atol)
    torch.testing.assert_close(doubling_scan(torch.exp(log_a), u), ref, rtol=0, atol=1e-9)
    held = torch.cat([got[:, :1] * 0, got[:, :-1]], dim=1)  # padding holds the previous state
    torch.testing.assert_close(got[pad], held[pad], rtol=0, atol=atol)


def test_linear_scan_gradients_match_the_loop() -> None:
    g = torch.Generator().manual_seed(3)
    log_a = (-torch.rand(2, 40, 3, generator=g, dtype=torch.float64) * 3).requires_grad_(True)
    u = torch.randn(2, 40, 3, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 40, 3, generator=g, dtype=torch.float64)
    grads = [torch.autograd.grad((f() * w).sum(), (log_a, u)) for f in
             (lambda: linear_scan(log_a, u), lambda: linear_scan(log_a, u, bound=4.0),
              lambda: linear_scan_reference(torch.exp(log_a), u))]
    for got in grads[:2]:
        for a, b in zip(got, grads[2]):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-8)


def test_scan_hand_example() -> None:
    # d = n = 1: h = [1, 0.5·1 + 2, 0.25·2.5 + 0] = [1, 2.5, 0.625]; y = h · C
    deltaA = torch.tensor([0.9, 0.5, 0.25], dtype=torch.float64).view(1, 3, 1, 1)
    deltaBx = torch.tensor([1.0, 2.0, 0.0], dtype=torch.float64).view(1, 3, 1, 1)
    C = torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64).view(1, 3, 1)
    expected = torch.tensor([[[1.0], [5.0], [-0.625]]], dtype=torch.float64)
    torch.testing.assert_close(selective_scan(deltaA.log(), deltaBx, C), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(selective_scan_reference(deltaA.log(), deltaBx, C), expected, rtol=0, atol=1e-12)


def test_mamba_initialisation() -> None:
    torch.manual_seed(0)
    head = build_head(HeadConfig(kind="conba-scan", dim=384, state_dim=16))
    r = head.config.resolved_dt_rank
    dt = F.softplus(head.dt_proj.bias.detach())
    assert float(dt.min()) >= DT_MIN * (1 - 1e-5) and float(dt.max()) <= DT_MAX * (1 + 1e-5)
    # log-uniform: log dt spreads evenly over [log dt_min, log dt_max]
    u = (dt.log() - math.log(DT_MIN)) / (math.log(DT_MAX) - math.log(DT_MIN))
    assert abs(float(u.mean()) - 0.5) < 0.05 and float(u.min()) < 0.02 and float(u.max()) > 0.98
    assert float((u < 0.25).float().mean()) == pytest.approx(0.25, abs=0.06)
    assert float(head.dt_proj.weight.detach().abs().max()) <= r ** -0.5
    torch.testing.assert_close(-torch.exp(head.A_log), -torch.arange(1, 17.0).repeat(384, 1))
    torch.testing.assert_close(head.D.detach(), torch.ones(384))


def test_ssm_matches_a_per_position_loop() -> None:
    torch.manual_seed(3)
    head = build_head(HeadConfig(kind="conba-scan", dim=8, state_dim=4)).double()
    b, l, d, n, r = 2, 7, 8, 4, head.config.resolved_dt_rank
    x = torch.randn(b, l, d, dtype=torch.float64)
    mask = torch.tensor([[1] * 7, [0, 0, 1, 1, 1, 1, 0]], dtype=torch.bool)
    A = -torch.exp(head.A_log)
    torch.testing.assert_close(A[0], -torch.arange(1, n + 1, dtype=torch.float64))  # S4D-real init
    with torch.no_grad():
        head.dt_proj.bias.add_(1.0)  # larger steps than at init, so the decays matter
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
    no_state = build_head(HeadConfig(**cfg, use_state=False)).double()
    assert "feedback_weight" not in dict(no_fb.named_parameters()) and "A_log" in dict(no_fb.named_parameters())
    assert {"feedback_weight", "A_log", "D", "x_proj.weight"}.isdisjoint(dict(no_state.named_parameters()))
    with torch.no_grad():
        full.fc2.weight.normal_()  # off its zero init, so the head's own terms show
    for dst in (no_ctrl, no_fb, no_state):
        dst.load_state_dict({k: v for k, v in full.state_dict().items() if k in dst.state_dict()})
    x, mask = torch.randn(2, 5, 8, dtype=torch.float64), torch.tensor([[1] * 5, [1, 1, 1, 0, 0]])
    with torch.no_grad():
        full.control_weight.copy_(torch.linspace(0.5, 2.0, 8))
        full.feedback_weight.copy_(torch.linspace(-1.0, 1.5, 8))
        assert not torch.allclose(full(x, mask), no_ctrl(x, mask))
        for dst in (no_fb, no_state):
            dst.control_weight.copy_(full.control_weight)
            assert not torch.allclose(full(x, mask), dst(x, mask))
        full.feedback_weight.zero_()
        torch.testing.assert_close(full(x, mask), no_state(x, mask), rtol=0, atol=1e-12)
        full.feedback_weight.fill_(1.0)
        torch.testing.assert_close(full(x, mask), no_fb(x, mask), rtol=0, atol=1e-12)
        full.control_weight.fill_(1.0)
        torch.testing.assert_close(full(x, mask), no_ctrl(x, mask), rtol=0, atol=1e-12)
