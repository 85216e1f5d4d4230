"""conba-scan: the Mamba S6 selective SSM with the ConbaLayer control/feedback gate.

Glossary (as in mamba-minimal):
    b: batch size
    l: sequence length (padding included)
    d: model width (``HeadConfig.dim``)
    n: SSM state size (``HeadConfig.state_dim``)
    c: control-code width

Per position t (x_t shape (b, d)):

    Δ, B, C     = softplus(dt_proj(Δ_lowrank)), B_t, C_t   from x_proj(x_t)   (b,l,d), (b,l,n), (b,l,n)
    ΔA          = exp(einsum('bld,dn->bldn', Δ, A))         A = -exp(A_log), shape (d, n)
    ΔB·x        = einsum('bld,bln,bld->bldn', Δ, B, x)
    h_t         = ΔA_t ⊙ h_{t-1} + ΔB_t x_t                 h_0 = 0
    y_t         = einsum('bldn,bln->bld', h, C) + D ⊙ x_t
    out_t       = swish(selective_fc(x_t)) ⊙ x_t ⊙ control_weight + y_t ⊙ feedback_weight
    embedding   = pool(x) + fc2(masked mean of out_t over real tokens)   (fc2 zero at init)

Padded positions get Δ = 0, so ΔA = 1 and ΔB·x = 0: the state passes through unchanged, which makes
left and right padding equivalent. ``use_control=False``: no control weight (nor offset codes);
``use_feedback=False``: no feedback_weight (out_t = adjusted_t + y_t); ``use_state=False``:
out_t = adjusted_t, the SSM is not created. ``residual=False`` (heads saved before the residual
existed): embedding = fc2(...), fc2 randomly initialised.

Initialisation as in the Mamba reference code (mamba_ssm/modules/mamba_simple.py): A_log = log(1..n) in
every row (S4D-real, A_n = -n); dt_proj.weight uniform in ±dt_rank^-0.5; dt_proj.bias = softplus⁻¹(dt)
with dt log-uniform in [DT_MIN, DT_MAX] = [0.001, 0.1] (floored at 1e-4), so Δ starts small and the
slowest state (A = -1) keeps a token's contribution for about 1/Δ ≈ 10 to 1000 tokens. (The default
nn.Linear bias put Δ near softplus(0) ≈ 0.7, and with A_n = -n the state forgot within a token or two.)

The recurrence h_t is computed by ``conba_research.heads.scan.linear_scan`` on log ΔA = Δ ⊙ A (a chunked
log-space scan, no Python loop over l); ``selective_scan_reference`` is the sequential loop.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from conba.heads.config import HeadConfig
from conba.heads.pooling import as_mask, masked_mean
from conba_research.heads.gate import GatedHead
from conba_research.heads.scan import linear_scan, linear_scan_reference

DT_MIN, DT_MAX, DT_FLOOR = 0.001, 0.1, 1e-4


def selective_scan(log_deltaA: torch.Tensor, deltaBx: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Selective scan without a loop over l.

    Args:
        log_deltaA: shape (b, l, d, n), log ΔA = Δ ⊙ A (≤ 0; 0 at padded positions)
        deltaBx: shape (b, l, d, n)
        C: shape (b, l, n)
    Returns:
        y: shape (b, l, d) = einsum('bldn,bln->bld', h, C), h_t = ΔA_t ⊙ h_{t-1} + ΔB_t x_t, h_0 = 0
    """
    return torch.einsum("bldn,bln->bld", linear_scan(log_deltaA, deltaBx), C)


def selective_scan_reference(log_deltaA: torch.Tensor, deltaBx: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Sequential selective scan (python loop over l), the definition ``selective_scan`` must match.

    Args:
        log_deltaA: shape (b, l, d, n)
        deltaBx: shape (b, l, d, n)
        C: shape (b, l, n)
    Returns:
        y: shape (b, l, d)
    """
    return torch.einsum("bldn,bln->bld", linear_scan_reference(torch.exp(log_deltaA), deltaBx), C)


def mamba_dt_bias(d: int, dt_min: float = DT_MIN, dt_max: float = DT_MAX, floor: float = DT_FLOOR) -> torch.Tensor:
    """dt_proj.bias as in Mamba: softplus(bias) = dt, dt log-uniform in [dt_min, dt_max], shape (d,)."""
    dt = torch.exp(torch.rand(d) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)).clamp(min=floor)
    return dt + torch.log(-torch.expm1(-dt))  # inverse of softplus


class ConbaScan(GatedHead):
    """kind="conba-scan": S6 selective SSM over token states + ConbaLayer control/feedback gate."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__(config)
        if config.kind != "conba-scan":
            raise ValueError(f"ConbaScan needs kind 'conba-scan', got {config.kind!r}")
        d, n, r = config.dim, config.state_dim, config.resolved_dt_rank
        self._build_gate(config)
        if config.use_state:
            self.x_proj = nn.Linear(d, r + 2 * n, bias=False)
            self.dt_proj = nn.Linear(r, d)
            with torch.no_grad():
                nn.init.uniform_(self.dt_proj.weight, -r ** -0.5, r ** -0.5)
                self.dt_proj.bias.copy_(mamba_dt_bias(d))
            # S4D-real init: A[:, i] = -(i + 1)
            self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(d, 1))
            self.D = nn.Parameter(torch.ones(d))
        self._build_output(config)

    @property
    def needs_tokens(self) -> bool:
        return True

    def ssm(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The S6 selective SSM with padded positions held (Δ = 0).

        Args:
            x: shape (b, l, d)
            mask: shape (b, l) bool
        Returns:
            y: shape (b, l, d)
        """
        n, r = self.config.state_dim, self.config.resolved_dt_rank
        A = -torch.exp(self.A_log.to(x.dtype))  # (d, n)
        delta, B, C = self.x_proj(x).split([r, n, n], dim=-1)  # (b, l, r), (b, l, n), (b, l, n)
        delta = F.softplus(self.dt_proj(delta)) * mask.unsqueeze(-1).to(x.dtype)  # (b, l, d)
        log_deltaA = torch.einsum("bld,dn->bldn", delta, A)
        deltaBx = torch.einsum("bld,bln,bld->bldn", delta, B, x)
        return selective_scan(log_deltaA, deltaBx, C) + x * self.D

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Embed a batch of snippets (output not normalised).

        Args:
            x: shape (b, l, d) token states
            mask: shape (b, l), True / 1 = real token; None = no padding
            lang_ids: shape (b,) control-code ids, or None (shared code 0)
        Returns:
            shape (b, out_dim)
        """
        m = as_mask(mask, x)
        out = self._adjusted(x, self._control(lang_ids, x.shape[0]))  # (b, l, d)
        if self.config.use_state:
            out = out + self._feedback(self.ssm(x, m))
        # fc2 is affine, so the masked mean before fc2 equals fc2 then the mean (1/l of the cost).
        return self._output(masked_mean(out, m), x, m)
