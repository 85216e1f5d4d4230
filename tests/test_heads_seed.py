"""The seed ConbaLayer (kind "conba") against hand-computed numbers, and its switches."""

from __future__ import annotations

import math

import pytest
import torch

from conba.heads import ConbaLayer, HeadConfig, build_head

S1 = 1.0 / (1.0 + math.exp(-1.0))  # swish(1) = 1 · sigmoid(1)
S2 = -1.0 / (1.0 + math.exp(1.0))  # swish(-1) = -1 · sigmoid(-1)


def hand_layer(mode: str = "tokens") -> ConbaLayer:
    """d = 2, every weight set by hand; fc2 = identity so the output is the pooled out_t."""
    head = build_head(HeadConfig(kind="conba", dim=2, mode=mode)).double()
    weights = {
        "selective_fc.weight": [[0.0, 0.0], [0.0, 0.0]],
        "selective_fc.bias": [1.0, -1.0],  # selective = [swish(1)·x0, swish(-1)·x1]
        "A.weight": [[0.5, 0.1], [0.0, 0.5]],
        "B.weight": [[1.0, 0.0], [0.0, 2.0]],
        "C.weight": [[1.0, 1.0], [0.0, 1.0]],
        "control_weight": [2.0, 3.0],
        "feedback_weight": [0.5, 1.0],
        "fc2.weight": [[1.0, 0.0], [0.0, 1.0]],
        "fc2.bias": [0.0, 0.0],
    }
    state = {k: torch.tensor(v, dtype=torch.float64) for k, v in weights.items() if k in head.state_dict()}
    head.load_state_dict(state)
    return head


X1, X2, X3 = [1.0, -2.0], [0.5, 1.0], [-1.0, 0.0]
# step 1 (state_0 = 0): state = B·x1 = [1, -4]; adjusted = [2·S1·1, 3·S2·(-2)]
Z1 = [2 * S1 + 0.5 * 1.0, -6 * S2 + 1.0 * -4.0]
OUT1 = [Z1[0] + Z1[1], Z1[1]]
STATE1 = [1.0, -4.0]
# step 2: state = A·[1, -4] + B·x2 = [0.5 - 0.4 + 0.5, -2 + 2] = [0.6, 0]; adjusted = [2·S1·0.5, 3·S2·1]
STATE2 = [0.6, 0.0]
Z2 = [S1 + 0.5 * 0.6, 3 * S2 + 0.0]
OUT2 = [Z2[0] + Z2[1], Z2[1]]
# step 3: state = A·[0.6, 0] + B·x3 = [0.3 - 1, 0] = [-0.7, 0]; adjusted = [2·S1·(-1), 0]
Z3 = [-2 * S1 + 0.5 * -0.7, 0.0]
OUT3 = [Z3[0] + Z3[1], Z3[1]]
MEAN3 = [(OUT1[i] + OUT2[i] + OUT3[i]) / 3 for i in range(2)]


def t(*rows: list[float]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def test_single_step_matches_hand_computation() -> None:
    head = hand_layer()
    out, state = head.step(t(X1))
    torch.testing.assert_close(out, t(OUT1), rtol=0, atol=1e-12)
    torch.testing.assert_close(state, t(STATE1), rtol=0, atol=1e-12)
    out, state = head.step(t(X2), t(STATE1))
    torch.testing.assert_close(out, t(OUT2), rtol=0, atol=1e-12)
    torch.testing.assert_close(state, t(STATE2), rtol=0, atol=1e-12)
    assert OUT1 == pytest.approx([-0.42423431452, -2.38635147178], abs=1e-10)


def test_pooled_mode_is_one_step_on_the_pooled_vector() -> None:
    head = hand_layer("pooled")
    assert head.A is None and not head.needs_tokens
    torch.testing.assert_close(head(t(X1), None), t(OUT1), rtol=0, atol=1e-12)
    # two tokens, masked mean [0.75, -0.5]: state = [0.75, -1]; adjusted = [1.5·S1, -1.5·S2]
    z = [1.5 * S1 + 0.5 * 0.75, -1.5 * S2 - 1.0]
    x = torch.tensor([[X1, X2, [9.0, 9.0]]], dtype=torch.float64)
    got = head(x, torch.tensor([[1, 1, 0]]))
    torch.testing.assert_close(got, t([z[0] + z[1], z[1]]), rtol=0, atol=1e-12)


def test_token_recurrence_matches_hand_computation() -> None:
    head = hand_layer("tokens")
    assert head.needs_tokens
    x = torch.tensor([[X1, X2, X3]], dtype=torch.float64)
    torch.testing.assert_close(head(x, None), t(MEAN3), rtol=0, atol=1e-12)
    assert MEAN3 == pytest.approx([(S1 - 3 * S2 - 3.55) / 3, (-3 * S2 - 4) / 3], abs=1e-12)
    # padded either side with junk: the state is held and the junk is not pooled
    junk = [7.0, -5.0]
    right = torch.tensor([[X1, X2, X3, junk, junk]], dtype=torch.float64)
    left = torch.tensor([[junk, junk, X1, X2, X3]], dtype=torch.float64)
    torch.testing.assert_close(head(right, torch.tensor([[1, 1, 1, 0, 0]])), t(MEAN3), rtol=0, atol=1e-12)
    torch.testing.assert_close(head(left, torch.tensor([[0, 0, 1, 1, 1]])), t(MEAN3), rtol=0, atol=1e-12)


def test_default_A_is_half_identity_and_stable_over_256_steps() -> None:
    torch.manual_seed(0)
    head = build_head(HeadConfig(kind="conba", dim=8, mode="tokens"))
    torch.testing.assert_close(head.A.weight, 0.5 * torch.eye(8))
    out = head(torch.randn(2, 256, 8), None)
    assert torch.isfinite(out).all() and out.abs().max() < 100


def _copy_shared(src: torch.nn.Module, dst: torch.nn.Module) -> None:
    shared = src.state_dict()
    assert set(dst.state_dict()) <= set(shared)
    dst.load_state_dict({k: v for k, v in shared.items() if k in dst.state_dict()})


@pytest.mark.parametrize("mode", ["pooled", "tokens"])
def test_switches_change_exactly_their_term(mode: str) -> None:
    torch.manual_seed(1)
    full = build_head(HeadConfig(kind="conba", dim=8, out_dim=5, mode=mode)).double()
    no_ctrl = build_head(HeadConfig(kind="conba", dim=8, out_dim=5, mode=mode, use_control=False)).double()
    no_fb = build_head(HeadConfig(kind="conba", dim=8, out_dim=5, mode=mode, use_feedback=False)).double()
    assert "control_weight" not in dict(no_ctrl.named_parameters())
    assert no_ctrl.control_weight_snapshot() == []
    assert {"feedback_weight", "B.weight", "A.weight"}.isdisjoint(dict(no_fb.named_parameters()))
    x = torch.randn(3, 6, 8, dtype=torch.float64)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    with torch.no_grad():
        full.control_weight.copy_(torch.linspace(0.5, 2.0, 8))
        full.feedback_weight.copy_(torch.linspace(-1.0, 1.5, 8))
        _copy_shared(full, no_ctrl)
        _copy_shared(full, no_fb)
        assert not torch.allclose(full(x, mask), no_ctrl(x, mask))
        assert not torch.allclose(full(x, mask), no_fb(x, mask))
        full.feedback_weight.zero_()  # feedback off == feedback weight of zeros
        torch.testing.assert_close(full(x, mask), no_fb(x, mask), rtol=0, atol=1e-12)
        full.feedback_weight.copy_(no_ctrl.feedback_weight)
        full.control_weight.fill_(1.0)  # control off == control weight of ones
        torch.testing.assert_close(full(x, mask), no_ctrl(x, mask), rtol=0, atol=1e-12)


def test_pooled_mode_rejects_a_previous_state() -> None:
    head = build_head(HeadConfig(kind="conba", dim=2))
    with pytest.raises(ValueError, match="tokens"):
        head.step(torch.zeros(1, 2), torch.zeros(1, 2))
