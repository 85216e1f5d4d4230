import math

import pytest
import torch

from conba.prune.losses import normalize_saliency, ranking_loss, score_mse


def _ranking_direct(pred, target, mask):
    terms = []
    for b in range(pred.shape[0]):
        for i in range(pred.shape[1]):
            for j in range(pred.shape[1]):
                if not (mask[b, i] and mask[b, j]) or target[b, i] == target[b, j]:
                    continue
                sign = 1.0 if target[b, i] > target[b, j] else -1.0
                terms.append(math.log(1 + math.exp(-(float(pred[b, i]) - float(pred[b, j])) * sign)))
    return sum(terms) / len(terms)


def test_ranking_loss_matches_direct_formula():
    torch.manual_seed(0)
    pred, target = torch.randn(3, 7), torch.randn(3, 7)
    target[0, 2] = target[0, 3]  # a tie: left out
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[1, 5:] = False
    got = float(ranking_loss(pred, target, mask))
    assert got == pytest.approx(_ranking_direct(pred, target, mask), rel=1e-5)


def test_ranking_loss_prefers_agreeing_order():
    target = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    mask = torch.ones(1, 4)
    good = ranking_loss(torch.tensor([[0.0, 5.0, 10.0, 15.0]]), target, mask)
    bad = ranking_loss(torch.tensor([[15.0, 10.0, 5.0, 0.0]]), target, mask)
    assert float(good) < 0.01 and float(bad) > 5


def test_ranking_loss_no_pairs_and_gradient():
    pred = torch.zeros(1, 3, requires_grad=True)
    loss = ranking_loss(pred, torch.ones(1, 3), torch.ones(1, 3))  # all tied
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert pred.grad is not None
    pred2 = torch.zeros(1, 3, requires_grad=True)
    ranking_loss(pred2, torch.tensor([[0.0, 1.0, 2.0]]), torch.ones(1, 3)).backward()
    assert pred2.grad.abs().sum() > 0


def test_score_mse_matches_direct_formula():
    prob = torch.tensor([[0.1, 0.9, 0.5], [0.2, 0.3, 0.7]])
    target = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    direct = ((0.1 ** 2) + (0.1 ** 2) + (0.5 ** 2) + (0.8 ** 2) + (0.3 ** 2)) / 5
    assert float(score_mse(prob, target, mask)) == pytest.approx(direct, rel=1e-6)


def test_losses_reject_bad_shapes():
    with pytest.raises(ValueError, match="shape mismatch"):
        ranking_loss(torch.zeros(2, 3), torch.zeros(2, 4), torch.ones(2, 3))
    with pytest.raises(ValueError, match="shape mismatch"):
        score_mse(torch.zeros(2, 3), torch.zeros(2, 3), torch.ones(3, 3))


def test_normalize_saliency_ranks_per_row():
    sal = torch.tensor([[5.0, -1.0, 2.0, 9.0], [3.0, 1.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    out = normalize_saliency(sal, mask)
    assert torch.allclose(out[0], torch.tensor([2 / 3, 0.0, 1 / 3, 1.0]))
    assert torch.allclose(out[1], torch.tensor([1.0, 0.0, 0.0, 0.0]))
    single = normalize_saliency(torch.tensor([[4.0, 0.0]]), torch.tensor([[1, 0]]))
    assert torch.allclose(single, torch.tensor([[1.0, 0.0]]))
