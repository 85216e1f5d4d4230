"""SDTP hard pruning at inference: the tokens the scorers rank lowest leave before each pruning layer.

Glossary: b batch, l tokens, k tokens kept, d hidden width.

At each pruning layer the scorer ranks the tokens entering it, hard top-k keeps ``keep_ratio`` of them
(plus the protected first/tail tokens), and the survivors are gathered into a shorter batch, so every
later layer runs on fewer tokens. The layers themselves run in :func:`conba.encoder.layers.run_layers`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conba.encoder.layers import embed_input, run_layers
from conba.encoder.sdtp.mask import gather_tokens, hard_keep_indices
from conba.encoder.sdtp.scorer import PruneModule, keep_score


@dataclass
class PrunedStates:
    """Result of hard pruning: final states of the surviving tokens (b, k, d) and their mask (b, k);
    with ``pool_pruned``, also the summed states of the pruned tokens at the layer they left (b, d)
    and every row's original token count (b,)."""

    hidden: torch.Tensor
    mask: torch.Tensor
    exit_sum: torch.Tensor | None = None
    n_tokens: torch.Tensor | None = None

    def to(self, device) -> PrunedStates:
        def move(t):
            return None if t is None else t.to(device)
        return PrunedStates(self.hidden.to(device), self.mask.to(device), move(self.exit_sum), move(self.n_tokens))


def dropped_sum(hidden: torch.Tensor, mask: torch.Tensor, index: torch.Tensor, new_mask: torch.Tensor) -> torch.Tensor:
    """Sum of the states of the real tokens that hard pruning removes.

    Args: hidden: (b, l, d); mask: (b, l); index, new_mask: (b, k) from hard_keep_indices. Returns (b, d).
    """
    kept = torch.zeros(mask.shape, dtype=torch.long, device=mask.device).scatter_add_(1, index, new_mask.long()) > 0
    dropped = mask.bool() & ~kept
    return (hidden * dropped.unsqueeze(-1).to(hidden.dtype)).sum(dim=1)


@torch.no_grad()
def pruned_states(backbone, pruner: PruneModule, input_ids: torch.Tensor,
                  attention_mask: torch.Tensor) -> PrunedStates:
    """Inference with hard pruning.

    Args:
        input_ids, attention_mask: shape (b, l)
    Returns:
        PrunedStates (hidden (b, k, d), mask bool (b, k), and the exit sums when ``pool_pruned``)
    """
    cfg = pruner.config
    stages = set(cfg.layers)
    hidden = embed_input(backbone, input_ids)
    mask = attention_mask.bool()
    n_tokens = mask.sum(dim=1)
    exit_sum = hidden.new_zeros(hidden.shape[0], hidden.shape[-1]) if cfg.pool_pruned else None

    def prune(i: int, hidden: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if i not in stages:
            return hidden, mask
        index, new_mask = hard_keep_indices(keep_score(pruner.logits(i, hidden)), mask, cfg.keep_ratio,
                                            cfg.keep_first, cfg.keep_tail)
        if exit_sum is not None:
            exit_sum.add_(dropped_sum(hidden, mask, index, new_mask))
        return gather_tokens(hidden, index), new_mask

    hidden, mask = run_layers(backbone.layers, hidden, mask, stage=prune)
    return PrunedStates(hidden, mask, exit_sum, n_tokens)


def embed_states(model, out: PrunedStates, lang_ids: torch.Tensor | None) -> torch.Tensor:
    """Head on pruned states. With exit sums and a mean-pooling head, the pooled vector is the mean over
    every original token: survivors at the last layer, pruned tokens at the layer they left."""
    head = model.head
    own = model.backbone.readout is None  # else the backbone's own read-out pools (conba.encoder.readout)
    if out.exit_sum is not None and own and not head.needs_tokens and head.config.pooling == "mean":
        assert out.n_tokens is not None  # recorded with the exit sums
        kept = (out.hidden * out.mask.unsqueeze(-1).to(out.hidden.dtype)).sum(dim=1)
        pooled = (kept + out.exit_sum) / out.n_tokens.clamp(min=1).unsqueeze(-1).to(out.hidden.dtype)
        return head(pooled, None, lang_ids)
    return head(*model.backbone.read_out(out.hidden, out.mask), lang_ids)


def embed_pruned(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                 lang_ids: torch.Tensor | None = None) -> torch.Tensor:
    """ConbaModel embedding with hard pruning. Args: input_ids, attention_mask: (b, l). Returns (b, out_dim)."""
    return embed_states(model, pruned_states(model.backbone, model.pruner, input_ids, attention_mask), lang_ids)
