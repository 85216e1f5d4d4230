"""PruneConfig: where and how much SDTP prunes, saved as ``prune_config.json`` next to the scorers.

Inference rule at each pruning layer ``p`` (tokens are removed *before* layer ``p`` runs):

* the ``keep_first`` first tokens and the last ``ceil(keep_tail * n)`` tokens are always kept
  (n = the tokens still alive in that snippet);
* of the rest, the highest-scoring ones are kept so that exactly
  ``k = min(n, max(ceil(keep_ratio * n), protected))`` tokens survive.

So the ratios compound: after s stages about ``keep_ratio ** s`` of the tokens are left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig

CONFIG_NAME = "prune_config.json"


@dataclass
class PruneConfig(JsonConfig):
    """Saved as ``prune_config.json`` beside the scorers' weights (:func:`conba.encoder.sdtp.scorer.save_pruner`)."""

    config_name: ClassVar[str] = "prune config"
    layers: list[int] = field(default_factory=lambda: [3, 4, 5])
    keep_ratio: float = 0.7
    keep_first: int = 4
    keep_tail: float = 0.1
    dim: int = 384
    hidden_ratio: int = 4  # scorer width = dim // hidden_ratio
    tau: float = 1.0  # Gumbel-softmax temperature during training
    pool_pruned: bool = False  # mean pooling also counts pruned tokens, at the layer they left
    num_layers: int = 6  # depth of the backbone it was made for
    base_fingerprint: str = ""  # fingerprint of the ConbaModel the scorers were trained on
    info: dict = field(default_factory=dict)  # training settings and results

    def validate(self) -> PruneConfig:
        if not self.layers:
            raise ConfigError("SDTP needs at least one pruning layer")
        if sorted(set(self.layers)) != list(self.layers):
            raise ConfigError(f"pruning layers must be strictly increasing, got {self.layers}")
        if self.layers[0] < 0 or self.layers[-1] >= self.num_layers:
            raise ConfigError(f"pruning layers must be in 0..{self.num_layers - 1} (tokens are dropped before "
                             f"that layer runs), got {self.layers}")
        if not 0.0 < self.keep_ratio <= 1.0:
            raise ConfigError(f"keep_ratio must be in (0, 1], got {self.keep_ratio}")
        if self.keep_first < 0:
            raise ConfigError(f"keep_first must be >= 0, got {self.keep_first}")
        if not 0.0 <= self.keep_tail < 1.0:
            raise ConfigError(f"keep_tail must be in [0, 1), got {self.keep_tail}")
        if self.dim < 1 or self.hidden_ratio < 1 or self.dim // self.hidden_ratio < 1:
            raise ConfigError(f"bad scorer width: dim {self.dim}, hidden_ratio {self.hidden_ratio}")
        if self.tau <= 0:
            raise ConfigError(f"tau must be > 0, got {self.tau}")
        return self

    def checked(self) -> PruneConfig:
        self.layers = [int(x) for x in self.layers]
        return self.validate()

    def token_fraction(self) -> float:
        """Share of the dense per-layer work left, if every layer cost the same per token (no tail
        or first-token floor): (sum over layers of the fraction of tokens alive) / num_layers."""
        alive, total, stage = 1.0, 0.0, 0
        for layer in range(self.num_layers):
            if stage < len(self.layers) and self.layers[stage] == layer:
                alive *= self.keep_ratio
                stage += 1
            total += alive
        return total / self.num_layers


def parse_layers(text: str) -> list[int]:
    """'2,3,4' or '2-5' or '2 3 4' -> sorted unique ints. Raises ValueError with the bad part."""
    out: set[int] = set()
    for part in text.replace(",", " ").split():
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ConfigError
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise ConfigError(f"bad layer list {text!r}: '{part}' is not a layer number or range") from None
    if not out:
        raise ConfigError("empty layer list")
    return sorted(out)
