"""Contrastive losses.

Glossary: b anchors, m candidates, p positives per anchor, q negatives per anchor, d width.

* :func:`simclr_multi_positive` — the research code's loss: for each anchor, the positives are
  summed inside the log, ``-log(Σ_pos e^{s/τ} / (Σ_pos e^{s/τ} + Σ_neg e^{s/τ}))``.
* :func:`supcon` — supervised contrastive loss (Khosla et al. 2020, L_out): each positive is its own
  term, ``-1/|P| Σ_p log(e^{s_p/τ} / Σ_{a≠i} e^{s_a/τ})``.

Both work on a similarity matrix with masks, so they serve explicit (anchor, positives, negatives)
triples and in-batch P×K batches alike.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _check(sim: torch.Tensor, pos: torch.Tensor, valid: torch.Tensor, temperature: float) -> None:
    if sim.shape != pos.shape or sim.shape != valid.shape:
        raise ValueError(f"shape mismatch: sim {tuple(sim.shape)}, pos {tuple(pos.shape)}, valid {tuple(valid.shape)}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")


def simclr_multi_positive(sim: torch.Tensor, pos: torch.Tensor, valid: torch.Tensor,
                          temperature: float) -> torch.Tensor:
    """Args: sim: shape (b, m) cosine similarities; pos, valid: (b, m) bool (pos ⊆ valid).
    Anchors without a positive are ignored. Returns the mean loss (scalar)."""
    _check(sim, pos, valid, temperature)
    logits = (sim / temperature).masked_fill(~valid, float("-inf"))
    has_pos = (pos & valid).any(dim=1)
    if not has_pos.any():
        return sim.sum() * 0.0
    log_all = torch.logsumexp(logits, dim=1)
    log_pos = torch.logsumexp(logits.masked_fill(~pos, float("-inf")), dim=1)
    return (log_all - log_pos)[has_pos].mean()


def supcon(sim: torch.Tensor, pos: torch.Tensor, valid: torch.Tensor, temperature: float) -> torch.Tensor:
    """Args: sim: shape (b, m); pos, valid: (b, m) bool. Returns the mean over anchors with positives."""
    _check(sim, pos, valid, temperature)
    logits = (sim / temperature).masked_fill(~valid, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    pos = pos & valid
    n_pos = pos.sum(dim=1)
    has_pos = n_pos > 0
    if not has_pos.any():
        return sim.sum() * 0.0
    per_anchor = -(log_prob.masked_fill(~pos, 0.0)).sum(dim=1) / n_pos.clamp(min=1)
    return per_anchor[has_pos].mean()


def in_batch_masks(groups: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Args: groups: shape (b,) integer group ids. Returns (pos, valid), each (b, b): positives share
    the group (not the anchor itself); every other item is a valid candidate."""
    eye = torch.eye(len(groups), dtype=torch.bool, device=groups.device)
    same = groups[:, None] == groups[None, :]
    return same & ~eye, ~eye


def in_batch_loss(emb: torch.Tensor, groups: torch.Tensor, temperature: float, kind: str = "supcon") -> torch.Tensor:
    """Args: emb: shape (b, d) embeddings (normalised here); groups: (b,). kind: supcon | simclr."""
    emb = F.normalize(emb, dim=-1)
    sim = emb @ emb.T
    pos, valid = in_batch_masks(groups)
    if kind == "supcon":
        return supcon(sim, pos, valid, temperature)
    if kind == "simclr":
        return simclr_multi_positive(sim, pos, valid, temperature)
    raise ValueError(f"unknown loss '{kind}' (supcon, simclr)")


def triplet_set_loss(anchor: torch.Tensor, positives: torch.Tensor, pos_mask: torch.Tensor,
                     negatives: torch.Tensor, neg_mask: torch.Tensor, temperature: float) -> torch.Tensor:
    """The research-code form with explicit sets.

    Args:
        anchor: shape (b, d); positives: (b, p, d) with pos_mask (b, p); negatives: (b, q, d) with
        neg_mask (b, q).
    """
    a = F.normalize(anchor, dim=-1)
    cands = F.normalize(torch.cat([positives, negatives], dim=1), dim=-1)
    sim = torch.einsum("bd,bmd->bm", a, cands)
    pos = torch.cat([pos_mask, torch.zeros_like(neg_mask)], dim=1).bool()
    valid = torch.cat([pos_mask, neg_mask], dim=1).bool()
    return simclr_multi_positive(sim, pos, valid, temperature)
