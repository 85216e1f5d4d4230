"""Head: the base class of every head (token states -> one vector per snippet).

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width

A head kind is a Head subclass built from a ``HeadConfig``: the product's kinds in ``conba.heads.baselines``,
others plugged in through the ``conba.heads`` entry points (``conba.utils.head_kinds``; the research suite's
ConbaLayer heads).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from conba.heads.config import HeadConfig
from conba.heads.prefix import PrefixCodes


def language_index(languages: Sequence[str]) -> dict[str, int]:
    """Map lower-cased language names to control-code ids 1..len(languages) (0 is the shared code)."""
    return {lang.strip().lower(): i + 1 for i, lang in enumerate(languages)}


def language_ids(names: Sequence[str | None], index: dict[str, int]) -> torch.Tensor:
    """Control-code ids (LongTensor (b,)) for language names; unknown names or None -> 0."""
    return torch.tensor([index.get((name or "").strip().lower(), 0) for name in names], dtype=torch.long)


class Head(nn.Module):
    """Base class. Subclasses implement ``forward`` and ``needs_tokens``.

    Language control codes: ``language_ids`` maps names to code ids (0: unknown / none); prefix codes
    (``prefix``, any kind, ``HeadConfig.code_mode`` prefix / both) act on the backbone's input (see
    ``conba.heads.prefix``). A head whose own output depends on the language too says so with
    ``depends_on_language``.
    """

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

    @property
    def depends_on_language(self) -> bool:
        """True when the vectors depend on the snippets' languages (control codes): prefix codes here."""
        return self.prefix is not None

    def control_weight_snapshot(self) -> list[float]:
        """The values the training history samples each epoch (a gated head's control weight); empty here."""
        return []
