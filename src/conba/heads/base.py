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


class Head(nn.Module):
    """Base class. Subclasses implement ``forward`` and ``needs_tokens``.

    The gate shared by the two ConbaLayer heads (``selective_fc``, ``control_weight``,
    ``feedback_weight``, control codes) is built here by ``_build_gate``.
    """

    def __init__(self, config: HeadConfig) -> None:
        super().__init__()
        config.validate()
        self.config = HeadConfig.from_dict(config.to_dict())  # private copy: later edits do not leak in
        self._lang_index = language_index(config.languages)

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
        # Switched-off parts are not created at all (so they are neither trained nor saved).
        for name, on in (("control_weight", config.use_control), ("feedback_weight", config.use_feedback)):
            self.register_parameter(name, nn.Parameter(torch.ones(d)) if on else None)
        self.codes = (ControlCodes(len(config.languages), d, config.code_dim)
                      if config.use_control and config.languages else None)

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
