"""Forward passes over ``Backbone.layers`` with SDTP pruning.

Glossary: b batch, l tokens, k tokens kept, d hidden width, L backbone layers.

* :func:`pruned_states` (inference): at each pruning layer the scorer ranks the tokens entering it,
  hard top-k keeps ``keep_ratio`` of them (plus the protected first/tail tokens), and the survivors
  are gathered into a shorter batch, so every later layer runs on fewer tokens.
* :func:`soft_states` (training): nothing is removed; the Gumbel-softmax keep weights multiply into a
  running weight per token that acts through the attention mask (log w added to the attention
  scores) and weights the final mean pooling, so the task loss has a gradient w.r.t. every scorer.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conba.encoder.backbone import extended_mask
from conba.errors import ConfigError
from conba.prune.mask import gather_tokens, gumbel_keep, hard_keep_indices, protected_tokens, soft_attention_mask
from conba.prune.scorer import PruneModule, keep_score

# Encoders whose forward is exactly embeddings -> encoder.layer[i](hidden, attention_mask) -> output.
# (DeBERTa passes relative positions to its layers, ELECTRA projects its embeddings: not listed.)
OWN_LOOP_MODEL_TYPES = ("bert", "roberta", "xlm-roberta", "camembert")


def supports_own_loop(backbone) -> bool:
    """True when conba can run (and prune, and export in segments) the backbone's layers itself."""
    return getattr(backbone.model.config, "model_type", "") in OWN_LOOP_MODEL_TYPES


def require_own_loop(backbone, what: str) -> None:
    if not supports_own_loop(backbone):
        raise ConfigError(f"{what} supports BERT/RoBERTa-family backbones ({', '.join(OWN_LOOP_MODEL_TYPES)}), "
                         f"not model type {getattr(backbone.model.config, 'model_type', '?')!r}")


def embed_input(backbone, input_ids: torch.Tensor) -> torch.Tensor:
    """Token + position embeddings. Args: input_ids: shape (b, l). Returns (b, l, d)."""
    return backbone.model.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))


def run_layer(layer, hidden: torch.Tensor, attn: torch.Tensor | None) -> torch.Tensor:
    """One encoder layer. Args: hidden: shape (b, l, d); attn: additive mask (b, 1, 1, l) or None."""
    out = layer(hidden, attention_mask=attn)
    return out[0] if isinstance(out, tuple) else out


def hard_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """Additive mask for 0/1 ``mask`` (b, l); None when nothing is padded (the fast attention path)."""
    return None if bool(mask.all()) else extended_mask(mask, dtype)


def dense_states(backbone, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The backbone's final token states through its own layer loop: the same maths as the HF forward
    (bit-identical on BERT-family models), with a broadcast (b, 1, 1, l) mask, or none at all for
    batches without padding, and no pooler. Args: input_ids, attention_mask: (b, l). Returns (b, l, d)."""
    hidden = embed_input(backbone, input_ids)
    attn = hard_mask(attention_mask, hidden.dtype)
    for layer in backbone.layers:
        hidden = run_layer(layer, hidden, attn)
    return hidden


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
    for i, layer in enumerate(backbone.layers):
        if i in stages:
            scores = keep_score(pruner.logits(i, hidden))
            index, new_mask = hard_keep_indices(scores, mask, cfg.keep_ratio, cfg.keep_first, cfg.keep_tail)
            if exit_sum is not None:
                exit_sum += dropped_sum(hidden, mask, index, new_mask)
            hidden, mask = gather_tokens(hidden, index), new_mask
        hidden = run_layer(layer, hidden, hard_mask(mask, hidden.dtype))
    return PrunedStates(hidden, mask, exit_sum, n_tokens)


def embed_states(model, out: PrunedStates, lang_ids: torch.Tensor | None) -> torch.Tensor:
    """Head on pruned states. With exit sums and a mean-pooling head, the pooled vector is the mean over
    every original token: survivors at the last layer, pruned tokens at the layer they left."""
    head = model.head
    if out.exit_sum is not None and not head.needs_tokens and head.config.pooling == "mean":
        kept = (out.hidden * out.mask.unsqueeze(-1).to(out.hidden.dtype)).sum(dim=1)
        pooled = (kept + out.exit_sum) / out.n_tokens.clamp(min=1).unsqueeze(-1).to(out.hidden.dtype)
        return head(pooled, None, lang_ids)
    return head(out.hidden, out.mask, lang_ids)


@dataclass
class SoftPass:
    """Result of :func:`soft_states`: final states (b, l, d), running keep weights (b, l) and, per
    pruning layer, the scorer logits (b, l, 2)."""

    hidden: torch.Tensor
    weights: torch.Tensor
    logits: dict[int, torch.Tensor]


def soft_states(backbone, pruner: PruneModule, hidden: torch.Tensor, attention_mask: torch.Tensor,
                start: int, tau: float | None = None) -> SoftPass:
    """Training pass from the states entering layer ``start`` (layers below it are not re-run).

    The protected tokens (first ``keep_first`` and last ``keep_tail`` of the real tokens) keep weight 1.

    Args:
        hidden: shape (b, l, d), the states entering layer ``start``
        attention_mask: shape (b, l)
    """
    cfg = pruner.config
    if start > cfg.layers[0]:
        raise ValueError(f"soft pass must start at or before the first pruning layer {cfg.layers[0]}, got {start}")
    tau = cfg.tau if tau is None else tau
    mask = attention_mask.bool()
    protected = protected_tokens(mask, cfg.keep_first, cfg.keep_tail)
    weights = mask.to(hidden.dtype)
    logits: dict[int, torch.Tensor] = {}
    stages = set(cfg.layers)
    for i in range(start, len(backbone.layers)):
        if i in stages:
            logits[i] = pruner.logits(i, hidden)
            keep = gumbel_keep(logits[i], tau)
            weights = weights * torch.where(protected, torch.ones_like(keep), keep)
        attn = soft_attention_mask(weights, hidden.dtype) if logits else hard_mask(mask, hidden.dtype)
        hidden = run_layer(backbone.layers[i], hidden, attn)
    return SoftPass(hidden, weights, logits)


def weighted_mean(hidden: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Args: hidden: shape (b, l, d); weights: (b, l). Returns sum_i w_i h_i / sum_i w_i, shape (b, d)."""
    w = weights.unsqueeze(-1)
    return (hidden * w).sum(dim=1) / w.sum(dim=1).clamp(min=1e-9)


def embed_pruned(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                 lang_ids: torch.Tensor | None = None) -> torch.Tensor:
    """ConbaModel embedding with hard pruning. Args: input_ids, attention_mask: (b, l). Returns (b, out_dim)."""
    return embed_states(model, pruned_states(model.backbone, model.pruner, input_ids, attention_mask), lang_ids)
