"""Settings read from the environment, in one place: cache folder, CPU threads, device choice.

* ``CONBA_CACHE``: cache folder (token states, ONNX exports, benchmark and noise runs); default
  ``~/.cache/conba``.
* ``CONBA_THREADS=N``: intra-op threads of torch and ONNX Runtime; unset (or 0) keeps torch's own
  default, the number of physical cores. Every thread count conba sets goes through
  :func:`apply_threads` (the process default) or :func:`torch_threads` (for one block). On the 2-core
  development machine 2 threads (one per core) are fastest; more threads than cores only adds
  contention (docs/BENCHMARKS.md, "Encoding speed").
* ``CONBA_OFFLINE=1`` (or ``HF_HUB_OFFLINE``): load backbones from local files only.
* device: ``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda``, ``cuda:N``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from conba.constants import CACHE_ENV, THREADS_ENV
from conba.errors import ConfigError, UsageError

if TYPE_CHECKING:  # torch is imported where a function needs it: reading a setting must not load it
    import torch

OFFLINE_ENV = "CONBA_OFFLINE"


def default_cache_dir() -> Path:
    """``$CONBA_CACHE``, default ``~/.cache/conba``."""
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "conba"))


def offline() -> bool:
    """Whether backbones load from local files only (``HF_HUB_OFFLINE`` or ``CONBA_OFFLINE=1``)."""
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or os.environ.get(OFFLINE_ENV) == "1"


def requested_threads() -> int:
    """The thread count from ``CONBA_THREADS`` (0 when unset or empty). Raises ConfigError if malformed."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return 0
    try:
        n = int(raw)
    except ValueError:
        raise ConfigError(f"{THREADS_ENV} must be a whole number of threads, got {raw!r}") from None
    if n < 0:
        raise ConfigError(f"{THREADS_ENV} must be >= 0, got {n}")
    return n


def apply_threads(n: int | None = None) -> int:
    """Set torch's intra-op threads to ``n`` (None: ``CONBA_THREADS``; 0 or unset: no change) and
    return the thread count in use."""
    import torch

    n = requested_threads() if n is None else n
    if n and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return torch.get_num_threads()


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[int]:
    """Run the block with ``n`` torch intra-op threads (0: no change), then restore the count before.
    Yields the count in use."""
    import torch

    before = torch.get_num_threads()
    try:
        yield apply_threads(n)
    finally:
        torch.set_num_threads(before)


def resolve_device(name: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU; anything else as torch names it (UsageError when
    the device is unknown, or CUDA / MPS is asked for but missing)."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise UsageError(f"unknown device '{name}' (auto, cpu, cuda, cuda:N, mps)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"device '{name}' requested but CUDA is not available; use --device cpu")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise UsageError(f"device '{name}' requested but this machine has {torch.cuda.device_count()} CUDA device(s)")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise UsageError(f"device '{name}' requested but MPS (Apple silicon) is not available here; use --device cpu")
    if device.type not in ("cpu", "cuda", "mps"):
        raise UsageError(f"device '{name}' is not supported (auto, cpu, cuda, cuda:N, mps)")
    return device
