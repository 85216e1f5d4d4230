"""What a benchmark records about the process and the machine: memory now and at peak, the CPU model.

One copy for every benchmark (speed report, ANN, index scale, IVF), so the same field means the same
measurement everywhere. Linux reads ``/proc``; elsewhere the values fall back as documented.
"""

from __future__ import annotations

import platform
from pathlib import Path


def rss_mb() -> int:
    """This process's resident memory now, MiB (``VmRSS``); -1 where ``/proc`` does not say."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return -1


def peak_rss_mb() -> int:
    """This process's peak resident memory so far, MiB (``ru_maxrss``: KiB on Linux)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :func:`platform.processor` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
