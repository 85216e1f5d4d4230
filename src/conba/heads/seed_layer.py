"""ConbaLayer: the seed head (kind "conba") from the research code.

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width (``HeadConfig.dim``)
    c: control-code width

One step, for an input vector x_t (shape (b, d)):

    state_t    = A · state_{t-1} + B · x_t                   state_0 = 0
    selective_t = swish(selective_fc(x_t)) ⊙ x_t
    adjusted_t  = selective_t ⊙ control_weight               (+ W · code(lang) with control codes)
    out_t       = C · (adjusted_t + state_t ⊙ feedback_weight)
    y           = fc2(out)

``mode="pooled"``: x is pooled to one vector per snippet and ONE step is taken (state = B · x).
``mode="tokens"``: the recurrence runs over the l token states; padded positions carry the state
unchanged and are left out of the final masked mean of out_t, so any padding gives the same result.

Switches: ``use_control=False`` drops control_weight (and the control codes): adjusted_t = selective_t.
``use_feedback=False`` drops the state (A, B, feedback_weight): out_t = C · adjusted_t.

Initialisation of A (tokens mode): ``A = 0.5 · I``. The research code only ever takes one step from
state 0, where A is never used; for the token recurrence we pick a contraction (spectral norm 0.5), so
state_t = sum_k 0.5^k · B · x_{t-k} is an exponentially decaying summary that stays bounded by
2 · max_t |B · x_t| over any length (256 steps or more). A default (Kaiming-uniform) init has spectral
norm near 1 for d = 384 and can grow the state geometrically. In pooled mode A is not created (it would
never receive a gradient).
"""

from __future__ import annotations

import torch
from torch import nn

from conba.heads.base import Head
from conba.heads.config import HeadConfig
from conba.heads.pooling import as_mask, masked_mean, pool

A_INIT_SCALE = 0.5


class ConbaLayer(Head):
    """kind="conba": the seed ConbaLayer, pooled (one step) or over token states (recurrence)."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__(config)
        if config.kind != "conba":
            raise ValueError(f"ConbaLayer needs kind 'conba', got {config.kind!r}")
        d = config.dim
        self._build_gate(config)
        self.A: nn.Linear | None = None
        self.B: nn.Linear | None = None
        if config.use_feedback:
            if config.mode == "tokens":
                self.A = nn.Linear(d, d, bias=False)
                with torch.no_grad():
                    self.A.weight.copy_(A_INIT_SCALE * torch.eye(d))
            self.B = nn.Linear(d, d, bias=False)
        self.C = nn.Linear(d, d, bias=False)
        self.fc2 = nn.Linear(d, config.resolved_out_dim)

    @property
    def needs_tokens(self) -> bool:
        return self.config.mode == "tokens"

    def step(self, x_t: torch.Tensor, state_prev: torch.Tensor | None = None,
             lang_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One ConbaLayer step, before fc2.

        Args:
            x_t: shape (b, d)
            state_prev: shape (b, d), or None for state_0 = 0 (the only choice in pooled mode)
            lang_ids: shape (b,) or None
        Returns:
            out_t: shape (b, d) = C · (adjusted_t + state_t ⊙ feedback_weight)
            state_t: shape (b, d), or None when use_feedback is False
        """
        adjusted = self._adjusted(x_t, self._control(lang_ids, x_t.shape[0]))
        if self.B is None:
            return self.C(adjusted), None
        state = self.B(x_t)
        if state_prev is not None:
            if self.A is None:
                raise ValueError("a previous state needs mode='tokens' (pooled mode has no A)")
            state = self.A(state_prev) + state
        return self.C(adjusted + state * self.feedback_weight), state

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Embed a batch of snippets (output not normalised).

        Args:
            x: shape (b, l, d) token states; in pooled mode also (b, d) pooled vectors with mask=None
            mask: shape (b, l), True / 1 = real token; None = no padding
            lang_ids: shape (b,) control-code ids, or None (shared code 0)
        Returns:
            shape (b, out_dim)
        """
        if self.config.mode == "pooled":
            out, _ = self.step(pool(x, mask, self.config.pooling), None, lang_ids)
            return self.fc2(out)
        m = as_mask(mask, x)
        b, l, d = x.shape
        adjusted = self._adjusted(x, self._control(lang_ids, b))  # (b, l, d)
        if self.B is None:
            z = adjusted
        else:
            bx = self.B(x)  # (b, l, d), all positions at once
            state = x.new_zeros(b, d)
            states = []
            for t in range(l):
                state = torch.where(m[:, t, None], self.A(state) + bx[:, t], state)
                states.append(state)
            z = adjusted + torch.stack(states, dim=1) * self.feedback_weight
        # fc2 is affine and the masked mean is a convex combination, so pooling before fc2 equals
        # fc2 then pooling (the order of the research code), at 1/l of the cost.
        return self.fc2(masked_mean(self.C(z), m))
