"""GatedHead: the control/feedback gate and the residual output map the two ConbaLayer heads share.

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width (``HeadConfig.dim``)
    c: control-code width (``HeadConfig.code_dim``)

    selective = swish(selective_fc(x)) ⊙ x
    adjusted  = selective ⊙ cw                cw = control_weight (+ W · code(lang), offset control codes)
    out       = ... + state ⊙ feedback_weight (each head adds its own state term)
    y         = pool(x) + fc2(out)            fc2 zero at init with the residual

``use_control=False`` drops control_weight and the offset codes; ``use_feedback=False`` drops
feedback_weight (the state is added unweighted). The product's ``conba.heads.base.Head`` knows nothing
of this gate: it lives with the heads that use it (``ConbaLayer``, ``ConbaScan``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from conba.heads.base import Head
from conba.heads.config import HeadConfig
from conba.heads.pooling import pool
from conba_research.heads.control_codes import ControlCodes, effective_control_weight

GATED_KINDS: tuple[str, ...] = ("conba", "conba-scan")


def uses_control_codes(config: HeadConfig) -> bool:
    """Offset control codes (W · code(lang) added to control_weight) are built for ``config``."""
    return (bool(config.languages) and config.use_control and config.kind in GATED_KINDS
            and config.code_mode in ("offset", "both"))


class GatedHead(Head):
    """A Head with the ConbaLayer gate (``_build_gate``) and output map (``_build_output``)."""

    # parts of the gate (_build_gate), None where switched off or not built
    control_weight: nn.Parameter | None
    feedback_weight: nn.Parameter | None
    codes: ControlCodes | None

    @property
    def depends_on_language(self) -> bool:
        return self.prefix is not None or self.codes is not None

    def control_weight_snapshot(self) -> list[float]:
        """The effective control weight of the shared code 0 (= ``control_weight`` without codes).

        Empty without a control weight.
        """
        cw = self.control_weight
        if cw is None:
            return []
        with torch.no_grad():
            if self.codes is not None:
                cw = cw + self.codes.shared_offset()
            return [float(v) for v in cw.detach().float().cpu()]

    def _build_gate(self, config: HeadConfig) -> None:
        d = config.dim
        self.selective_fc = nn.Linear(d, d)
        # Switched-off parts are not created at all (so they are neither trained nor saved); without a
        # state there is nothing for feedback_weight to weigh.
        for name, on in (("control_weight", config.use_control),
                         ("feedback_weight", config.use_feedback and config.use_state)):
            self.register_parameter(name, nn.Parameter(torch.ones(d)) if on else None)
        self.codes = (ControlCodes(len(config.languages), d, config.code_dim)
                      if uses_control_codes(config) else None)

    def _build_output(self, config: HeadConfig) -> None:
        """fc2: (d -> out_dim). With ``residual``, fc2 starts at zero and the pooled input is added
        (through ``skip``, a Linear, when out_dim != d), so a fresh head returns pool(x)."""
        self.fc2 = nn.Linear(config.dim, config.resolved_out_dim)
        self.skip: nn.Linear | None = None
        if config.residual:
            nn.init.zeros_(self.fc2.weight)
            nn.init.zeros_(self.fc2.bias)
            if config.resolved_out_dim != config.dim:
                self.skip = nn.Linear(config.dim, config.resolved_out_dim, bias=False)

    def _output(self, z: torch.Tensor, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """fc2(z), plus pool(x) (through skip) with the residual.

        Args:
            z: shape (b, d), the pooled head output before fc2
            x: shape (b, l, d) token states with mask (b, l), or (b, d) pooled vectors with mask None
        Returns:
            shape (b, out_dim)
        """
        y = self.fc2(z)
        if not self.config.residual:
            return y
        pooled = pool(x, mask, self.config.pooling)
        return y + (pooled if self.skip is None else self.skip(pooled))

    def _feedback(self, state: torch.Tensor) -> torch.Tensor:
        """The feedback term: state ⊙ feedback_weight (state alone with use_feedback=False)."""
        return state if self.feedback_weight is None else state * self.feedback_weight

    def _adjusted(self, x: torch.Tensor, cw: torch.Tensor | None) -> torch.Tensor:
        """selective = swish(selective_fc(x)) ⊙ x; adjusted = selective ⊙ cw (cw None: no control).

        Args:
            x: shape (b, d) or (b, l, d)
            cw: shape (b, d) (broadcast over l) or None
        """
        selective = F.silu(self.selective_fc(x)) * x
        if cw is None:
            return selective
        return selective * (cw.unsqueeze(1) if x.dim() == 3 else cw)

    def _control(self, lang_ids: torch.Tensor | None, batch_size: int) -> torch.Tensor | None:
        """The effective control weight, shape (b, d), or None when use_control is False."""
        if self.control_weight is None:
            return None
        return effective_control_weight(self.control_weight, self.codes, lang_ids, batch_size)
