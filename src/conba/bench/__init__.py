"""Benchmarks: ``conba bench speed`` (encoding throughput of conba variants vs sentence-transformers)."""

from conba.bench.speed import SpeedConfig, run_speed
from conba.bench.variants import VARIANTS

__all__ = ["VARIANTS", "SpeedConfig", "run_speed"]
