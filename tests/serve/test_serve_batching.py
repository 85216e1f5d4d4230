"""The encode batcher: requests that arrive together share one encode call, off the event loop.

No wall-clock limits: the encoder blocks on an event until the test releases it, so what runs
concurrently is decided by the test, not by a busy machine's timing. A timeout only ends a test
that would otherwise hang (and fails it)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from conba.serve.batching import EncodeBatcher

TIMEOUT = 10.0  # seconds; reached only when the behaviour under test is broken


class GatedEncoder:
    """Vectors that name their snippet (row i = [int(code), len(language)]). Each call signals that it
    has started (``started``) and then waits for ``release`` (set from the start: no waiting)."""

    def __init__(self, gated: bool = True, fail: bool = False):
        self.fail = fail
        self.started = threading.Semaphore(0)
        self.release = threading.Event()
        if not gated:
            self.release.set()
        self.calls: list[int] = []
        self.threads: set[str] = set()
        self.timed_out = False

    def __call__(self, codes: list[str], languages: list[str]) -> np.ndarray:
        self.calls.append(len(codes))
        self.threads.add(threading.current_thread().name)
        self.started.release()
        if not self.release.wait(TIMEOUT):
            self.timed_out = True
        if self.fail:
            raise ValueError("model exploded")
        return np.array([[float(c), float(len(lang))] for c, lang in zip(codes, languages)], dtype=np.float32)

    async def wait_started(self) -> bool:
        """Wait (without blocking the event loop) until one more call has started."""
        return await asyncio.to_thread(self.started.acquire, timeout=TIMEOUT)


def _run(coro):
    return asyncio.run(coro)


def test_concurrent_requests_share_batches_and_keep_their_rows():
    enc = GatedEncoder()

    async def main():
        b = EncodeBatcher(enc, workers=1, max_batch=64)
        await b.start()
        try:
            jobs = asyncio.gather(*[b.encode([str(i), str(i + 100)], ["py", ""]) for i in range(10)])
            assert await enc.wait_started()  # the first batch is encoding; every request has been queued
            enc.release.set()
            return await jobs, b.stats
        finally:
            await b.stop()

    results, stats = _run(main())
    for i, out in enumerate(results):
        np.testing.assert_array_equal(out, [[i, 2], [i + 100, 0]])
    assert len(enc.calls) < 10 and sum(enc.calls) == 20  # requests that wait together go together
    assert stats.requests == 10 and stats.batches == len(enc.calls) and stats.largest >= 5
    assert enc.threads and all(name.startswith("conba-encode") for name in enc.threads)


def test_max_batch_caps_a_batch():
    enc = GatedEncoder()

    async def main():
        b = EncodeBatcher(enc, workers=1, max_batch=4)
        await b.start()
        try:
            jobs = asyncio.gather(*[b.encode([str(i)], [""]) for i in range(12)])
            assert await enc.wait_started()  # all 12 are queued while the first batch encodes
            enc.release.set()
            await jobs
        finally:
            await b.stop()

    _run(main())
    assert max(enc.calls) <= 4 and sum(enc.calls) == 12 and len(enc.calls) >= 3


def test_event_loop_stays_free_while_encoding():
    enc = GatedEncoder()

    async def main():
        b = EncodeBatcher(enc, workers=2)
        await b.start()
        try:
            job = asyncio.create_task(b.encode(["1"], [""]))
            started = await enc.wait_started()  # the loop runs this while the encode call is blocked
            enc.release.set()  # had encode run on the loop, nothing could set this: it would time out
            await job
            return started
        finally:
            await b.stop()

    assert _run(main()) and not enc.timed_out
    assert threading.main_thread().name not in enc.threads


def test_workers_encode_in_parallel():
    enc = GatedEncoder()

    async def main():
        b = EncodeBatcher(enc, workers=2)
        await b.start()
        try:
            first = asyncio.create_task(b.encode(["1"], [""]))
            assert await enc.wait_started()  # the first worker is busy; the second takes the next request
            second = asyncio.create_task(b.encode(["2"], [""]))
            both = await enc.wait_started()  # only possible while the first call still runs
            enc.release.set()
            await asyncio.gather(first, second)
            return both
        finally:
            await b.stop()

    assert _run(main()) and enc.calls == [1, 1] and not enc.timed_out


def test_errors_reach_every_waiting_request():
    enc = GatedEncoder(fail=True)

    async def main():
        b = EncodeBatcher(enc, workers=1)
        await b.start()
        try:
            jobs = asyncio.gather(*[b.encode([str(i)], [""]) for i in range(3)], return_exceptions=True)
            assert await enc.wait_started()
            enc.release.set()
            return await jobs
        finally:
            await b.stop()

    out = _run(main())
    assert len(out) == 3 and all(isinstance(x, ValueError) and "exploded" in str(x) for x in out)


class PoisonEncoder(GatedEncoder):
    """Fails any call that contains the snippet "bad" (like a tokenizer given a lone surrogate)."""

    def __call__(self, codes: list[str], languages: list[str]) -> np.ndarray:
        if "bad" in codes:
            self.calls.append(len(codes))
            raise ValueError("cannot tokenize")
        return super().__call__(codes, languages)


def test_one_bad_request_fails_only_itself():
    enc = PoisonEncoder()

    async def main():
        b = EncodeBatcher(enc, workers=1, max_batch=64)
        await b.start()
        try:
            codes = ["bad" if i in (3, 7) else str(i) for i in range(12)]
            first = asyncio.ensure_future(b.encode(["0"], [""]))
            assert await enc.wait_started()  # the rest queue up behind the first call, then go as one batch
            rest = asyncio.gather(*[b.encode([c], [""]) for c in codes[1:]], return_exceptions=True)
            await asyncio.sleep(0.05)
            enc.release.set()
            out = [await first, *await rest]
            return codes, out, b.stats
        finally:
            await b.stop()

    codes, out, stats = _run(main())
    for code, result in zip(codes, out):
        if code == "bad":
            assert isinstance(result, ValueError)
        else:
            assert isinstance(result, np.ndarray) and result[0, 0] == float(code)
    assert max(enc.calls) > 1  # they were batched together, and the batch failed first
    assert stats.failed == 2 and stats.retried > 0 and stats.requests == 10


def test_needs_start():
    with pytest.raises(RuntimeError, match="start"):
        _run(EncodeBatcher(GatedEncoder(gated=False)).encode(["1"], [""]))


def test_default_workers_give_each_worker_two_threads():
    from conba.serve.app import default_workers

    assert [default_workers(c) for c in (1, 2, 3, 4, 16)] == [1, 1, 1, 2, 8]
