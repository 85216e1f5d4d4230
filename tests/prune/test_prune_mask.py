import math

import pytest
import torch

from conba.encoder.sdtp.mask import gather_tokens, hard_keep_indices, keep_counts, protected_tokens
from conba.prune.soft import gumbel_keep, soft_attention_mask


def test_protected_tokens_first_and_tail():
    mask = torch.zeros(2, 40, dtype=torch.long)
    mask[0, :40] = 1
    mask[1, :25] = 1
    prot = protected_tokens(mask, keep_first=4, keep_tail=0.1)
    assert prot[0].nonzero().flatten().tolist() == [0, 1, 2, 3, 36, 37, 38, 39]
    assert prot[1].nonzero().flatten().tolist() == [0, 1, 2, 3, 22, 23, 24]  # ceil(2.5) = 3 tail tokens
    assert not prot[1, 25:].any()


def test_keep_counts_exact_and_floored():
    mask = torch.zeros(3, 100, dtype=torch.long)
    mask[0, :100] = 1
    mask[1, :10] = 1
    mask[2, :3] = 1
    counts = keep_counts(mask, 0.7, 4, 0.1)
    assert counts.tolist() == [70, 7, 3]  # ceil(0.7*10)=7; a 3-token row keeps all
    assert keep_counts(mask, 0.1, 4, 0.1).tolist() == [14, 5, 3]  # floor: 4 first + 10 tail / 4 + 1
    with pytest.raises(ValueError, match="keep_ratio"):
        keep_counts(mask, 0.0, 4, 0.1)


@pytest.mark.parametrize("ratio", [0.3, 0.5, 0.7, 1.0])
def test_hard_pruning_keeps_protected_and_exact_count(ratio):
    torch.manual_seed(0)
    b, l = 4, 60
    lengths = [60, 41, 17, 5]
    mask = torch.zeros(b, l, dtype=torch.long)
    for row, n in enumerate(lengths):
        mask[row, :n] = 1
    scores = torch.randn(b, l)
    scores[:, :4] = -100.0  # protected tokens are kept even when they score worst
    scores[0, -6:] = -100.0
    index, new_mask = hard_keep_indices(scores, mask, ratio, 4, 0.1)
    for row, n in enumerate(lengths):
        kept = index[row][new_mask[row]].tolist()
        tail = math.ceil(0.1 * n)
        expected = min(n, max(math.ceil(ratio * n - 1e-6), min(n, 4 + tail)))
        assert len(kept) == expected
        assert kept == sorted(kept) and len(set(kept)) == len(kept)  # original order, no repeats
        assert set(range(min(4, n))) <= set(kept)
        assert set(range(n - tail, n)) <= set(kept)
        assert all(k < n for k in kept)  # never a padding position
        free = [i for i in range(4, n - tail)]
        chosen = [i for i in kept if i in free]
        if chosen and len(chosen) < len(free):  # the rest are the best-scoring free tokens
            best = sorted(free, key=lambda i: -float(scores[row, i]))[: len(chosen)]
            assert sorted(best) == chosen
    assert new_mask.shape[1] == int(new_mask.sum(1).max())


def test_gather_tokens():
    x = torch.arange(2 * 5 * 3, dtype=torch.float).view(2, 5, 3)
    index = torch.tensor([[0, 2, 4], [1, 1, 3]])
    out = gather_tokens(x, index)
    assert torch.equal(out[0, 1], x[0, 2]) and torch.equal(out[1, 2], x[1, 3])


def test_gumbel_mask_is_soft_and_differentiable():
    torch.manual_seed(0)
    logits = torch.randn(2, 6, 2, requires_grad=True)
    keep = gumbel_keep(logits, tau=1.0)
    assert keep.shape == (2, 6)
    assert ((keep > 0) & (keep < 1)).all()
    attn = soft_attention_mask(keep, torch.float32)
    assert attn.shape == (2, 1, 1, 6)
    (attn.sum() + keep.sum()).backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


def test_soft_attention_mask_zero_weight_is_masked():
    w = torch.tensor([[1.0, 0.5, 0.0]])
    m = soft_attention_mask(w, torch.float32)[0, 0, 0]
    assert m[0] == 0.0 and m[1] == pytest.approx(math.log(0.5)) and m[2] == torch.finfo(torch.float32).min
