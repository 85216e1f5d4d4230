"""ConbaLayer: the seed head (kind "conba") from the research code.

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width (``HeadConfig.dim``)
    c: control-code width

One step, for an input vector x_t (shape (b, d)):

    state_t     = A · state_{t-1} + B · x_t                   state_0 = 0
    selective_t = swish(selective_fc(x_t)) ⊙ x_t
    adjusted_t  = selective_t ⊙ control_weight               (+ W · code(lang) with offset control codes)
    out_t       = C · (adjusted_t + state_t ⊙ feedback_weight)
    y           = pool(x) + fc2(out)                          (fc2 zero at init: y = pool(x) at step 0)

``mode="pooled"``: x is pooled to one vector per snippet and ONE step is taken (state = B · x, no A).
``mode="tokens"``: the recurrence runs over the l token states; padded positions carry the state
unchanged and are left out of the final masked mean of out_t, so any padding gives the same result.

Switches: ``use_control=False`` drops control_weight (and the offset codes): adjusted_t = selective_t.
``use_feedback=False`` drops feedback_weight only: out_t = C · (adjusted_t + state_t).
``use_state=False`` drops the state (A, B, and feedback_weight, which would weigh nothing): out_t = C · adjusted_t.
``residual=False`` (heads saved before the residual existed): y = fc2(out), fc2 randomly initialised.

A over tokens (``state_a``):
  * "diag" (default): A = diag(exp(-exp(A_log))), one decay per channel in (0, 1). The recurrence is a
    parallel scan (``conba_research.heads.scan.linear_scan``, no Python loop over time). The decay rates -log a
    start log-spaced over [1/512, 1/2] (half-lives of about 1.4 to 355 tokens), so some channels
    remember the whole snippet; B's rows start scaled by (1 - a), which makes each state channel an
    exponential moving average of (B₀ · x) and keeps every channel's scale equal, slow or fast.
  * "dense": a full d × d A, initialised to 0.5 · I (a contraction: the state stays bounded by
    2 · max_t |B · x_t|), run as a sequential loop over l: a parallel scan of a dense recurrence needs
    d × d matrix products per combine (O(l · d³) or O(l · d² · log l) work against the loop's
    O(l · d²)), which is slower than the loop on CPUs. Kept for the heads trained before "diag".
In pooled mode no A is created (it would never receive a gradient).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from conba.heads.config import HeadConfig
from conba.heads.pooling import as_mask, masked_mean, pool
from conba_research.heads.gate import GatedHead
from conba_research.heads.scan import linear_scan

A_INIT_SCALE = 0.5  # dense A = 0.5 · I
A_RATE_MIN, A_RATE_MAX = 1.0 / 512, 0.5  # diag A: decay rates -log a, log-spaced over the d channels


def diag_rates(d: int) -> torch.Tensor:
    """The initial decay rates -log a of a diagonal A, shape (d,), log-spaced over [A_RATE_MIN, A_RATE_MAX]."""
    return torch.logspace(math.log10(A_RATE_MIN), math.log10(A_RATE_MAX), d)


class ConbaLayer(GatedHead):
    """kind="conba": the seed ConbaLayer, pooled (one step) or over token states (recurrence)."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__(config)
        if config.kind != "conba":
            raise ValueError(f"ConbaLayer needs kind 'conba', got {config.kind!r}")
        d = config.dim
        self._build_gate(config)
        self.A: nn.Linear | None = None
        self.A_log: nn.Parameter | None = None
        self.B: nn.Linear | None = None
        if config.use_state:
            self.B = nn.Linear(d, d, bias=False)
            if config.mode == "tokens" and config.state_a == "dense":
                self.A = nn.Linear(d, d, bias=False)
                with torch.no_grad():
                    self.A.weight.copy_(A_INIT_SCALE * torch.eye(d))
            elif config.mode == "tokens":
                rates = diag_rates(d)
                self.A_log = nn.Parameter(torch.log(rates))
                with torch.no_grad():
                    self.B.weight.mul_(-torch.expm1(-rates).unsqueeze(1))  # rows scaled by 1 - a
        self.C = nn.Linear(d, d, bias=False)
        self._build_output(config)

    @property
    def needs_tokens(self) -> bool:
        return self.config.mode == "tokens"

    def decay(self) -> torch.Tensor | None:
        """The diagonal of a diagonal A, exp(-exp(A_log)), shape (d,); None without one."""
        return None if self.A_log is None else torch.exp(-torch.exp(self.A_log))

    def step(self, x_t: torch.Tensor, state_prev: torch.Tensor | None = None,
             lang_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One ConbaLayer step, before fc2 (the definition the token scan is tested against).

        Args:
            x_t: shape (b, d)
            state_prev: shape (b, d), or None for state_0 = 0 (the only choice in pooled mode)
            lang_ids: shape (b,) or None
        Returns:
            out_t: shape (b, d) = C · (adjusted_t + state_t ⊙ feedback_weight)
            state_t: shape (b, d), or None when use_state is False
        """
        adjusted = self._adjusted(x_t, self._control(lang_ids, x_t.shape[0]))
        if self.B is None:
            return self.C(adjusted), None
        state = self.B(x_t)
        if state_prev is not None:
            if self.A is not None:
                state = self.A(state_prev) + state
            elif (decay := self.decay()) is not None:
                state = decay * state_prev + state
            else:
                raise ValueError("a previous state needs mode='tokens' (pooled mode has no A)")
        return self.C(adjusted + self._feedback(state)), state

    def states(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """state_t for every position; a padded position holds the previous state.

        Args:
            x: shape (b, l, d)
            mask: shape (b, l) bool
        Returns:
            shape (b, l, d)
        """
        if self.B is None:
            raise ValueError("this head has no state (use_state=False)")
        bx = self.B(x)  # (b, l, d), all positions at once
        m = mask.unsqueeze(-1)
        if self.A_log is not None:  # diagonal A: parallel scan, padding = decay 1 (log 0) and input 0
            log_a = -torch.exp(self.A_log) * m.to(x.dtype)  # (b, l, d)
            return linear_scan(log_a, bx * m.to(x.dtype))
        if self.A is None:
            raise ValueError("a state over tokens needs mode='tokens'")
        state = x.new_zeros(x.shape[0], x.shape[2])
        states = []
        for t in range(x.shape[1]):  # dense A: sequential (see the module docstring)
            state = torch.where(m[:, t], self.A(state) + bx[:, t], state)
            states.append(state)
        return torch.stack(states, dim=1)

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
            pooled = pool(x, mask, self.config.pooling)
            out, _ = self.step(pooled, None, lang_ids)
            return self._output(out, pooled, None)
        m = as_mask(mask, x)
        z = self._adjusted(x, self._control(lang_ids, x.shape[0]))  # (b, l, d)
        if self.B is not None:
            z = z + self._feedback(self.states(x, m))
        # fc2 is affine and the masked mean is a convex combination, so pooling before fc2 equals
        # fc2 then pooling (the order of the research code), at 1/l of the cost.
        return self._output(masked_mean(self.C(z), m), x, m)
