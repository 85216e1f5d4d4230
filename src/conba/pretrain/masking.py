"""Dynamic masking for MLM (BERT / RoBERTa) and the labels of replaced-token detection (ELECTRA).

Glossary: b batch, l tokens.

Every call draws a new mask (dynamic masking, RoBERTa): each non-special token is chosen with
probability ``mask_prob`` (15%); a chosen token becomes ``[MASK]`` with probability 0.8, a random
vocabulary token with probability 0.1 and stays as it is otherwise. Labels are the original ids at
chosen positions and -100 (ignored by the loss) everywhere else.
"""

from __future__ import annotations

import torch

IGNORE = -100


def special_tokens_mask(input_ids: torch.Tensor, attention_mask: torch.Tensor, special_ids: list[int]) -> torch.Tensor:
    """True at padding and special tokens ([CLS], [SEP], [PAD]...). Args: input_ids: shape (b, l)."""
    special = ~attention_mask.bool()
    if special_ids:
        special |= torch.isin(input_ids, torch.tensor(sorted(set(special_ids)), device=input_ids.device))
    return special


def mask_tokens(input_ids: torch.Tensor, special: torch.Tensor, *, vocab_size: int, mask_token_id: int,
                mask_prob: float = 0.15, mask_token_prob: float = 0.8, random_token_prob: float = 0.1,
                generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Choose and corrupt tokens for MLM.

    Args: input_ids: shape (b, l); special: bool (b, l), never chosen.
    Returns ``(masked_ids, labels, chosen)``: the corrupted ids (b, l), labels (b, l) with -100 where
    not chosen, and the bool mask of chosen positions (b, l).
    """
    if input_ids.shape != special.shape:
        raise ValueError(f"input_ids {tuple(input_ids.shape)} and special {tuple(special.shape)} differ in shape")
    ids = input_ids.cpu()
    shape = ids.shape
    prob = torch.full(shape, float(mask_prob))
    prob[special.cpu()] = 0.0
    chosen = torch.bernoulli(prob, generator=generator).bool()
    action = torch.rand(shape, generator=generator)
    to_mask = chosen & (action < mask_token_prob)
    to_random = chosen & (action >= mask_token_prob) & (action < mask_token_prob + random_token_prob)
    random_ids = torch.randint(vocab_size, shape, generator=generator, dtype=ids.dtype)
    masked = ids.clone()
    masked[to_mask] = mask_token_id
    masked[to_random] = random_ids[to_random]
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    dev = input_ids.device
    return masked.to(dev), labels.to(dev), chosen.to(dev)


def replaced_token_labels(input_ids: torch.Tensor, chosen: torch.Tensor,
                          sampled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The discriminator's input and labels (ELECTRA).

    Args: input_ids: original ids (b, l); chosen: bool (b, l); sampled: generator samples (m,) for the
    m chosen positions in row-major order. Returns ``(corrupted, labels)``: the original ids with the
    chosen positions replaced by the samples, and labels (b, l) that are 1 where the token differs
    from the original (replaced) and 0 elsewhere, so a sample that reproduces the original token
    counts as original, as in ELECTRA.
    """
    if int(chosen.sum()) != sampled.numel():
        raise ValueError(f"{int(chosen.sum())} chosen positions but {sampled.numel()} sampled tokens")
    corrupted = input_ids.clone()
    corrupted[chosen] = sampled.to(input_ids.dtype)
    return corrupted, (corrupted != input_ids).long()
