"""The seed ConbaLayer (kind "conba") against hand-computed numbers, its switches, the diagonal-A scan
against the step-by-step loop, and its initialisation."""

from __future__ import annotations

import math

import pytest
import torch

from conba.heads import HeadConfig, build_head
from conba_research.heads import ConbaLayer

S1 = 1.0 / (1.0 + math.exp(-1.0))  # swish(1) = 1 · sigmoid(1)
S2 = -1.0 / (1.0 + math.exp(1.0))  # swish(-1) = -1 · sigmoid(-1)


def hand_layer(mode: str = "tokens") -> ConbaLayer:
    """d = 2, every weight set by hand, dense A, no residual; fc2 = identity so the output is the pooled out_t."""
    head = build_head(HeadConfig(kind="conba", dim=2, mode=mode, residual=False, state_a="dense")).double()
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


def test_dense_A_is_half_identity_and_stable_over_256_steps() -> None:
    torch.manual_seed(0)
    head = build_head(HeadConfig(kind="conba", dim=8, mode="tokens", state_a="dense", residual=False))
    torch.testing.assert_close(head.A.weight, 0.5 * torch.eye(8))
    assert head.A_log is None
    out = head(torch.randn(2, 256, 8), None)
    assert torch.isfinite(out).all() and out.abs().max() < 100


def test_diag_A_init_spans_short_and_long_memory() -> None:
    torch.manual_seed(0)
    head = build_head(HeadConfig(kind="conba", dim=16, mode="tokens"))
    assert head.config.state_a == "diag" and head.A is None
    rates = torch.exp(head.A_log.detach())
    torch.testing.assert_close(rates[0], torch.tensor(1 / 512), rtol=1e-5, atol=0)
    torch.testing.assert_close(rates[-1], torch.tensor(0.5), rtol=1e-5, atol=0)
    assert bool((rates[1:] > rates[:-1]).all())
    # B's rows start scaled by 1 - a, so a constant input drives every state channel to B0 · x
    ref = build_head(HeadConfig(kind="conba", dim=16, mode="pooled"))
    scale = -torch.expm1(-rates)
    unscaled = head.B.weight.detach() / scale.unsqueeze(1)
    assert unscaled.abs().max() <= 1 / 16 ** 0.5 + 1e-6  # still the default Kaiming-uniform bound
    x = torch.randn(1, 1, 16).expand(1, 4000, 16)
    with torch.no_grad():
        last = head.states(x, torch.ones(1, 4000, dtype=torch.bool))[0, -1]
    torch.testing.assert_close(last, unscaled @ x[0, 0], rtol=1e-3, atol=1e-4)
    assert ref.A_log is None and ref.A is None  # pooled mode: one step, no A


def _diag_loop(head: ConbaLayer, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The state of every position by ``step`` (padded positions hold the previous state)."""
    rows = []
    for i in range(x.shape[0]):
        state, states = None, []
        for t in range(x.shape[1]):
            if mask[i, t]:
                _, state = head.step(x[i, t][None], state)
                state = state[0]
            states.append(torch.zeros(x.shape[2], dtype=x.dtype) if state is None else state)
        rows.append(torch.stack(states))
    return torch.stack(rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_diag_scan_matches_the_step_loop_with_padding(seed: int) -> None:
    torch.manual_seed(seed)
    head = build_head(HeadConfig(kind="conba", dim=6, mode="tokens")).double()
    with torch.no_grad():
        head.A_log.add_(torch.randn(6) * 2)  # decays from ~0 to ~1
    b, l = 3, 37
    x = torch.randn(b, l, 6, dtype=torch.float64)
    mask = torch.rand(b, l) < 0.7
    mask[:, 0] = False  # left padding
    mask[2, 20:] = False  # right padding
    with torch.no_grad():
        got = head.states(x, mask)
        torch.testing.assert_close(got, _diag_loop(head, x, mask), rtol=0, atol=1e-10)
        # junk in the padding changes neither the real tokens' states nor the embedding
        junk = torch.where(mask.unsqueeze(-1), x, torch.full_like(x, 50.0))
        torch.testing.assert_close(head.states(junk, mask)[mask], got[mask], rtol=0, atol=1e-10)
        torch.testing.assert_close(head(junk, mask), head(x, mask), rtol=0, atol=1e-10)


def _copy_shared(src: torch.nn.Module, dst: torch.nn.Module) -> None:
    shared = src.state_dict()
    assert set(dst.state_dict()) <= set(shared)
    dst.load_state_dict({k: v for k, v in shared.items() if k in dst.state_dict()})


@pytest.mark.parametrize("mode, state_a", [("pooled", "diag"), ("tokens", "diag"), ("tokens", "dense")])
def test_switches_change_exactly_their_term(mode: str, state_a: str) -> None:
    torch.manual_seed(1)
    base = dict(kind="conba", dim=8, out_dim=5, mode=mode, state_a=state_a)
    full = build_head(HeadConfig(**base)).double()
    no_ctrl = build_head(HeadConfig(**base, use_control=False)).double()
    no_fb = build_head(HeadConfig(**base, use_feedback=False)).double()
    no_state = build_head(HeadConfig(**base, use_state=False)).double()
    no_path = build_head(HeadConfig(**base, use_state=False, use_feedback=False)).double()
    assert "control_weight" not in dict(no_ctrl.named_parameters())
    assert no_ctrl.control_weight_snapshot() == []
    assert "feedback_weight" not in dict(no_fb.named_parameters())
    kept = set(dict(no_fb.named_parameters()))
    assert "B.weight" in kept and (mode == "pooled" or {"A_log", "A.weight"} & kept)
    for head in (no_state, no_path):
        assert {"feedback_weight", "B.weight", "A.weight", "A_log"}.isdisjoint(dict(head.named_parameters()))
    assert dict(no_state.state_dict()).keys() == dict(no_path.state_dict()).keys()
    x = torch.randn(3, 6, 8, dtype=torch.float64)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    with torch.no_grad():
        full.fc2.weight.normal_()  # off its zero init, so the head's own terms show
        full.control_weight.copy_(torch.linspace(0.5, 2.0, 8))
        full.feedback_weight.copy_(torch.linspace(-1.0, 1.5, 8))
        for other in (no_ctrl, no_fb, no_state, no_path):
            _copy_shared(full, other)
            assert not torch.allclose(full(x, mask), other(x, mask))
        torch.testing.assert_close(no_state(x, mask), no_path(x, mask), rtol=0, atol=0)
        full.feedback_weight.zero_()  # no state == feedback weight of zeros
        torch.testing.assert_close(full(x, mask), no_state(x, mask), rtol=0, atol=1e-12)
        full.feedback_weight.fill_(1.0)  # feedback off == feedback weight of ones, state kept
        torch.testing.assert_close(full(x, mask), no_fb(x, mask), rtol=0, atol=1e-12)
        full.feedback_weight.copy_(no_ctrl.feedback_weight)
        full.control_weight.fill_(1.0)  # control off == control weight of ones
        torch.testing.assert_close(full(x, mask), no_ctrl(x, mask), rtol=0, atol=1e-12)


def test_pooled_mode_rejects_a_previous_state() -> None:
    head = build_head(HeadConfig(kind="conba", dim=2))
    with pytest.raises(ValueError, match="tokens"):
        head.step(torch.zeros(1, 2), torch.zeros(1, 2))
