"""Layer-wise terms for ``conba distill`` beside the vector loss (TinyBERT / MiniLM style).

Glossary: b batch, l tokens, d hidden width, h attention heads, e head width (d = h * e).

* **hidden** (TinyBERT, Jiao et al. 2020): the output states of student layer ``j`` follow those of
  teacher layer ``layers[j]`` (the layer it was cut from), token by token. conba uses 1 - cosine
  (mean over real tokens) rather than MSE: it is scale-free, so the term weighs the same in every
  layer whatever the norm of its states.
* **attention** (MiniLM, Wang et al. 2020): the last layer's self-attention distributions
  softmax(Q K^T / sqrt(e)) and value relations softmax(V V^T / sqrt(e)) of the student follow the
  teacher's last layer, KL(teacher || student) per head and real query token.

Both need the token states of every layer, so the teacher runs with the student in each step (the
vector term alone reads cached teacher vectors). BERT/RoBERTa-family backbones only: conba runs their
layer loop itself (:mod:`conba.encoder.layers`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from conba.encoder.adapter_bert import MASKED, attention_relations
from conba.encoder.layers import embed_input, require_own_loop, run_layers

__all__ = ["MASKED", "LayerTrace", "attention_relations", "hidden_distance", "layer_loss", "layer_trace",
           "relation_kl"]

@dataclass
class LayerTrace:
    outputs: list[torch.Tensor]  # the output states (b, l, d) of every layer, in order
    last_input: torch.Tensor     # the states (b, l, d) entering the last layer (for its attention)


def layer_trace(backbone, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> LayerTrace:
    """Every layer's output states. Args: input_ids, attention_mask: shape (b, l)."""
    require_own_loop(backbone, "layer-wise distillation (--hidden-weight, --attention-weight)")
    inputs: list[torch.Tensor] = []

    def keep(i: int, hidden: torch.Tensor, mask: torch.Tensor):
        inputs.append(hidden)
        return hidden, mask

    final, _ = run_layers(backbone.layers, embed_input(backbone, input_ids), attention_mask, stage=keep)
    return LayerTrace(outputs=[*inputs[1:], final], last_input=inputs[-1])


def relation_kl(log_s: torch.Tensor, log_t: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """KL(teacher || student) of (b, h, l, l) log distributions, mean over heads and real query tokens."""
    kl = F.kl_div(log_s, log_t, reduction="none", log_target=True).sum(-1)  # (b, h, l)
    rows = attention_mask.to(kl.dtype)[:, None, :]  # (b, 1, l)
    return (kl * rows).sum() / (rows.sum() * kl.shape[1]).clamp_min(1)


def hidden_distance(s: torch.Tensor, t: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """1 - cosine of student / teacher token states (b, l, d), mean over real tokens."""
    m = attention_mask.to(s.dtype)  # (b, l)
    cos = F.cosine_similarity(s, t, dim=-1)  # (b, l)
    return ((1 - cos) * m).sum() / m.sum().clamp_min(1)


def layer_loss(student_trace: LayerTrace, teacher_trace: LayerTrace, layers: list[int], student_backbone,
               teacher_backbone, attention_mask: torch.Tensor, hidden_weight: float,
               attention_weight: float) -> torch.Tensor:
    """hidden_weight * mean over student layers of :func:`hidden_distance` to their teacher layers, plus
    attention_weight * (attention KL + value-relation KL) of the last layers."""
    loss = student_trace.outputs[-1].new_zeros(())
    if hidden_weight:
        pairs = [(s, teacher_trace.outputs[i]) for s, i in zip(student_trace.outputs, layers)]
        loss = loss + hidden_weight * torch.stack([hidden_distance(s, t, attention_mask) for s, t in pairs]).mean()
    if attention_weight:
        s_att, s_val = attention_relations(student_backbone.layers[-1], student_trace.last_input, attention_mask)
        with torch.no_grad():
            t_att, t_val = attention_relations(teacher_backbone.layers[-1], teacher_trace.last_input, attention_mask)
        loss = loss + attention_weight * (relation_kl(s_att, t_att, attention_mask)
                                          + relation_kl(s_val, t_val, attention_mask))
    return loss
