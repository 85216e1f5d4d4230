"""CPU thread settings for encoding (torch and ONNX Runtime).

``CONBA_THREADS=N`` sets the number of intra-op threads of both engines; unset (or 0) keeps torch's
own default, which is the number of physical cores. On the 2-core development machine 2 threads
(one per core) are fastest; more threads than cores only adds contention (docs/BENCHMARKS.md, "Encoding speed").
"""

from __future__ import annotations

import os

import torch

from conba.errors import ConfigError

THREADS_ENV = "CONBA_THREADS"


def requested_threads() -> int:
    """The thread count from ``CONBA_THREADS`` (0 when unset or empty). Raises ValueError if malformed."""
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


def apply_threads() -> int:
    """Apply ``CONBA_THREADS`` to torch (when set) and return the intra-op thread count in use."""
    n = requested_threads()
    if n and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return torch.get_num_threads()
