import math

import pytest
import torch

from conba.train.losses import in_batch_loss, in_batch_masks, simclr_multi_positive, supcon, triplet_set_loss


def test_simclr_multi_positive_direct():
    sim = torch.tensor([[0.9, 0.5, 0.1], [0.2, 0.8, -0.3]])
    pos = torch.tensor([[True, True, False], [False, True, False]])
    valid = torch.ones(2, 3, dtype=torch.bool)
    t = 0.5
    e = [[math.exp(v / t) for v in row] for row in sim.tolist()]
    expect = (-math.log((e[0][0] + e[0][1]) / sum(e[0])) - math.log(e[1][1] / sum(e[1]))) / 2
    assert simclr_multi_positive(sim, pos, valid, t).item() == pytest.approx(expect, rel=1e-6)


def test_supcon_direct():
    sim = torch.tensor([[0.9, 0.5, 0.1]])
    pos = torch.tensor([[True, True, False]])
    valid = torch.ones(1, 3, dtype=torch.bool)
    t = 0.1
    e = [math.exp(v / t) for v in sim[0].tolist()]
    expect = -(math.log(e[0] / sum(e)) + math.log(e[1] / sum(e))) / 2
    assert supcon(sim, pos, valid, t).item() == pytest.approx(expect, rel=1e-6)


def test_in_batch_masks_and_loss():
    groups = torch.tensor([0, 0, 1, 1])
    pos, valid = in_batch_masks(groups)
    assert pos.tolist()[0] == [False, True, False, False]
    assert not valid.diagonal().any()
    emb = torch.randn(4, 8, requires_grad=True)
    for kind in ("supcon", "simclr"):
        loss = in_batch_loss(emb, groups, 0.1, kind)
        loss.backward()
        assert emb.grad is not None and torch.isfinite(loss)
    # perfect clustering gives a lower loss than a random layout
    good = torch.tensor([[1.0, 0], [1, 0], [0, 1], [0, 1]])
    assert in_batch_loss(good, groups, 0.1) < in_batch_loss(torch.randn(4, 2), groups, 0.1) + 1e-6


def test_triplet_set_loss_matches_simclr():
    a, p, n = torch.randn(2, 4), torch.randn(2, 2, 4), torch.randn(2, 3, 4)
    pm, nm = torch.tensor([[1, 1], [1, 0]]).bool(), torch.ones(2, 3, dtype=torch.bool)
    loss = triplet_set_loss(a, p, pm, n, nm, 0.2)
    an = torch.nn.functional.normalize(a, dim=-1)
    manual = []
    for b in range(2):
        cands = [p[b, j] for j in range(2) if pm[b, j]] + [n[b, j] for j in range(3)]
        s = torch.stack([torch.dot(an[b], torch.nn.functional.normalize(c, dim=0)) for c in cands]) / 0.2
        n_pos = int(pm[b].sum())
        manual.append(-(torch.logsumexp(s[:n_pos], 0) - torch.logsumexp(s, 0)))
    assert loss.item() == pytest.approx(torch.stack(manual).mean().item(), rel=1e-5)


def test_loss_bad_input():
    with pytest.raises(ValueError, match="temperature"):
        supcon(torch.zeros(1, 2), torch.ones(1, 2).bool(), torch.ones(1, 2).bool(), 0)
    with pytest.raises(ValueError, match="shape mismatch"):
        supcon(torch.zeros(1, 2), torch.ones(1, 3).bool(), torch.ones(1, 2).bool(), 1)
    with pytest.raises(ValueError, match="unknown loss"):
        in_batch_loss(torch.randn(2, 2), torch.tensor([0, 0]), 0.1, "x")
