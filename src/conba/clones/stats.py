"""Class-size statistics of one clone run, printed with every ``conba clones`` and stored in its reports.

They show at a glance whether the classes are usable: one class holding a large share of the units
(the chaining that connected components produced) or many pairs per unit mean the threshold is too
low or the units too small.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from conba.source.records import CloneClass


@dataclass
class CloneStats:
    units: int                      # units in the index
    considered: int                 # units the clone graph was built over
    skipped_trivial: dict[str, int] = field(default_factory=dict)  # reason -> units (conba.clones.trivial)
    skipped_short: int = 0          # units shorter than min_lines
    candidate_pairs: int = 0        # kNN pairs at or above the threshold
    classes: int = 0
    clone_pairs: int = 0            # pairs inside a class
    units_in_classes: int = 0
    largest_class: int = 0
    largest_share: float = 0.0      # largest class / considered units
    median_class_size: float = 0.0
    pairs_per_unit: float = 0.0     # clone pairs / considered units

    @property
    def trivial(self) -> int:
        return sum(self.skipped_trivial.values())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["largest_share"] = round(self.largest_share, 4)
        d["pairs_per_unit"] = round(self.pairs_per_unit, 4)
        return d

    def summary(self) -> str:
        """Two lines for people (stderr)."""
        reasons = ", ".join(f"{n} {r}" for r, n in self.skipped_trivial.items() if n)
        skipped = f"{self.trivial} skipped as trivial" + (f" ({reasons})" if reasons else "")
        short = f", {self.skipped_short} shorter than --min-lines" if self.skipped_short else ""
        return (f"units: {self.units} indexed, {self.considered} considered, {skipped}{short}\n"
                f"classes: {self.classes}, largest {self.largest_class} ({self.largest_share:.1%} of the units "
                f"considered), median size {self.median_class_size:g}, {self.pairs_per_unit:.2f} pairs per unit")


def clone_stats(classes: list[CloneClass], units: int, considered: int, skipped_trivial: dict[str, int],
                skipped_short: int, candidate_pairs: int) -> CloneStats:
    sizes = [len(c.units) for c in classes]
    pairs = sum(len(c.pairs) for c in classes)
    largest = max(sizes, default=0)
    return CloneStats(
        units=units, considered=considered, skipped_trivial=dict(skipped_trivial), skipped_short=skipped_short,
        candidate_pairs=candidate_pairs, classes=len(classes), clone_pairs=pairs, units_in_classes=sum(sizes),
        largest_class=largest, largest_share=largest / considered if considered else 0.0,
        median_class_size=float(np.median(sizes)) if sizes else 0.0,
        pairs_per_unit=pairs / considered if considered else 0.0)
