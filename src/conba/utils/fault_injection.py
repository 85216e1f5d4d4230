"""Fault injection for the crash tests, the one place the runtime reads test hooks.

Two variables, both unset in normal use (then every hook is a no-op):

- ``CONBA_TEST_KILL=POINT``: the process SIGKILLs itself when it reaches the named point — an IVF build or
  update (``ivf-build-rows``, ``ivf-appended``, ``ivf-written``, ``ivf-files-written``, ``ivf-cleanup``) or
  ``conba index --rebuild`` (``rebuild-encoded``, ``rebuild-swapped``). One mechanism for every point: the
  tests (tests/index/test_index_ivf_kill.py, tests/index/test_index_rebuild_swap.py) check what a reader sees after it.
- ``CONBA_INDEX_TEST_DELAY=SECONDS``: sleep after each committed batch of an index write (build, upgrade,
  Ray), so a test can kill or read the writer mid-run.
"""

from __future__ import annotations

import os
import signal
import time

KILL_ENV = "CONBA_TEST_KILL"
DELAY_ENV = "CONBA_INDEX_TEST_DELAY"
KILL_POINTS = ("ivf-build-rows", "ivf-appended", "ivf-written", "ivf-files-written", "ivf-cleanup",
               "rebuild-encoded", "rebuild-swapped")


def kill_point(name: str) -> None:
    """SIGKILL this process here when ``CONBA_TEST_KILL`` names ``name`` (one of :data:`KILL_POINTS`)."""
    if name not in KILL_POINTS:
        raise ValueError(f"unknown kill point {name!r} (known: {', '.join(KILL_POINTS)})")
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def commit_delay() -> float:
    """Seconds to sleep after each committed batch (``CONBA_INDEX_TEST_DELAY``; 0 when unset)."""
    return float(os.environ.get(DELAY_ENV, "0") or 0)


def pause_after_commit(delay: float) -> None:
    """Sleep ``delay`` seconds (from :func:`commit_delay`) after a commit; nothing when 0."""
    if delay:
        time.sleep(delay)
