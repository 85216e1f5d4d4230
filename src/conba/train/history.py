"""Training history: per-step loss, per-epoch dev MAP@R and control_weight samples; JSON + PNG."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conba.utils.io import atomic_write, write_json_atomic

SAMPLE_DIMS = 12


class History:
    def __init__(self) -> None:
        self.steps: list[float] = []
        self.epochs: list[dict] = []

    def log_step(self, loss: float) -> None:
        self.steps.append(loss)

    def log_epoch(self, epoch: int, train_loss: float | None, dev_map: float | None,
                  control_weight: list[float], seconds: float | None = None) -> None:
        self.epochs.append({"epoch": epoch, "train_loss": train_loss, "dev_map_at_r": dev_map,
                            "seconds": seconds, "control_weight_sample": control_weight[:SAMPLE_DIMS],
                            "control_weight_mean": (sum(control_weight) / len(control_weight))
                            if control_weight else None})

    def to_dict(self) -> dict:
        return {"step_loss": self.steps, "epochs": self.epochs}

    @classmethod
    def from_dict(cls, data: dict) -> History:
        h = cls()
        h.steps = list(data.get("step_loss", []))
        h.epochs = list(data.get("epochs", []))
        return h

    def save(self, directory: str | Path, plot: bool = True) -> None:
        directory = Path(directory)
        write_json_atomic(directory / "history.json", self.to_dict())
        if plot and importlib.util.find_spec("matplotlib") is not None:  # optional: pip install 'conba[plots]'
            self.plot(directory)

    def plot(self, directory: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
        ax = axes[0]
        if self.steps:
            ax.plot(range(1, len(self.steps) + 1), self.steps, lw=0.6, alpha=0.5, label="per step")
            w = max(1, len(self.steps) // 50)
            smooth = [sum(self.steps[max(0, i - w):i + 1]) / len(self.steps[max(0, i - w):i + 1])
                      for i in range(len(self.steps))]
            ax.plot(range(1, len(smooth) + 1), smooth, lw=1.5, label=f"moving mean ({w + 1})")
        ax.set(title="Training loss", xlabel="step", ylabel="contrastive loss")
        ax.legend()
        ax = axes[1]
        pts = [(e["epoch"], e["dev_map_at_r"]) for e in self.epochs if e["dev_map_at_r"] is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", label="dev MAP@R")
        tl = [(e["epoch"], e["train_loss"]) for e in self.epochs if e["train_loss"] is not None]
        if tl:
            ax2 = ax.twinx()
            ax2.plot(*zip(*tl), marker="s", color="tab:red", label="train loss")
            ax2.set_ylabel("mean train loss")
            ax2.legend(loc="lower right")
        ax.set(title="Validation", xlabel="epoch", ylabel="mean cross-language MAP@R")
        if pts:
            ax.legend(loc="upper left")
        ax = axes[2]
        cw = [(e["epoch"], e["control_weight_sample"]) for e in self.epochs if e["control_weight_sample"]]
        if cw:
            for d in range(len(cw[0][1])):
                ax.plot([c[0] for c in cw], [c[1][d] for c in cw], lw=1, label=f"dim {d}" if d < 6 else None)
            ax.legend(fontsize=7, ncol=2)
        else:
            ax.text(0.5, 0.5, "head has no control_weight", ha="center", va="center", transform=ax.transAxes)
        ax.set(title=f"control_weight (first {SAMPLE_DIMS} dims)", xlabel="epoch", ylabel="value")
        fig.tight_layout()
        atomic_write(directory / "curves.png", lambda p: fig.savefig(p, dpi=110, format="png"))
        plt.close(fig)
