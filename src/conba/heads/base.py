"""Head: the base class of every head (token states -> one vector per snippet).

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width
    c: control-code width
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from conba.heads.config import HeadConfig
from conba.heads.control_codes import ControlCodes, effective_control_weight, language_ids, language_index
from conba.heads.pooling import pool
from conba.heads.prefix import PrefixCodes


class Head(nn.Module):
    """Base class. Subclasses implement ``forward`` and ``needs_tokens``.

    The gate shared by the two ConbaLayer heads (``selective_fc``, ``control_weight``,
    ``feedback_weight``, offset control codes) is built here by ``_build_gate``, their output map
    (``fc2``, zero-initialised with the residual) by ``_build_output``. Prefix control codes
    (``prefix``, any kind) act on the backbone's input: see ``conba.heads.prefix``.
    """

    # parts of the ConbaLayer gate (_build_gate), None where switched off or not built
    control_weight: nn.Parameter | None
    feedback_weight: nn.Parameter | None
    codes: ControlCodes | None

    def __init__(self, config: HeadConfig) -> None:
        super().__init__()
        config.validate()
        self.config = HeadConfig.from_dict(config.to_dict())  # private copy: later edits do not leak in
        self._lang_index = language_index(config.languages)
        self.prefix = PrefixCodes(len(config.languages), config.dim) if config.uses_prefix_codes else None

    @property
    def needs_tokens(self) -> bool:
        """True when the head needs every token state, False when a pooled (b, d) vector is enough."""
        raise NotImplementedError

    @property
    def out_dim(self) -> int:
        return self.config.resolved_out_dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None,
                lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Args: x: shape (b, l, d); mask: shape (b, l); lang_ids: shape (b,). Returns (b, out_dim)."""
        raise NotImplementedError

    def language_ids(self, languages: Sequence[str | None]) -> torch.Tensor:
        """Control-code ids, LongTensor (b,): 0 for unknown/None, 1..len(config.languages) for known."""
        return language_ids(languages, self._lang_index)

    def control_weight_snapshot(self) -> list[float]:
        """The effective control weight of the shared code 0 (= ``control_weight`` without codes).

        Empty for heads without a control weight.
        """
        cw = getattr(self, "control_weight", None)
        if cw is None:
            return []
        with torch.no_grad():
            codes = getattr(self, "codes", None)
            if codes is not None:
                cw = cw + codes.shared_offset()
            return [float(v) for v in cw.detach().float().cpu()]

    # ------------------------------------------------------------------ ConbaLayer gate
    def _build_gate(self, config: HeadConfig) -> None:
        d = config.dim
        self.selective_fc = nn.Linear(d, d)
        # Switched-off parts are not created at all (so they are neither trained nor saved); without a
        # state there is nothing for feedback_weight to weigh.
        for name, on in (("control_weight", config.use_control),
                         ("feedback_weight", config.use_feedback and config.use_state)):
            self.register_parameter(name, nn.Parameter(torch.ones(d)) if on else None)
        self.codes = (ControlCodes(len(config.languages), d, config.code_dim)
                      if config.uses_control_codes else None)

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
