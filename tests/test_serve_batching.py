"""The encode batcher: requests that arrive together share one encode call, off the event loop."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from conba.serve.batching import EncodeBatcher


class SlowEncoder:
    """Vectors that name their snippet (row i = [int(code)]); each call takes ``seconds``."""

    def __init__(self, seconds: float = 0.2, fail: bool = False):
        self.seconds, self.fail = seconds, fail
        self.calls: list[int] = []
        self.threads: set[str] = set()

    def __call__(self, codes: list[str], languages: list[str]) -> np.ndarray:
        self.calls.append(len(codes))
        self.threads.add(threading.current_thread().name)
        time.sleep(self.seconds)
        if self.fail:
            raise ValueError("model exploded")
        return np.array([[float(c), float(len(lang))] for c, lang in zip(codes, languages)], dtype=np.float32)


def _run(coro):
    return asyncio.run(coro)


def test_concurrent_requests_share_batches_and_keep_their_rows():
    enc = SlowEncoder()

    async def main():
        b = EncodeBatcher(enc, workers=1, max_batch=64)
        await b.start()
        try:
            jobs = [b.encode([str(i), str(i + 100)], ["py", ""]) for i in range(10)]
            return await asyncio.gather(*jobs), b.stats
        finally:
            await b.stop()

    results, stats = _run(main())
    for i, out in enumerate(results):
        np.testing.assert_array_equal(out, [[i, 2], [i + 100, 0]])
    assert len(enc.calls) < 10 and sum(enc.calls) == 20  # the first runs alone, the rest wait and go together
    assert stats.requests == 10 and stats.batches == len(enc.calls) and stats.largest >= 5
    assert enc.threads and all(name.startswith("conba-encode") for name in enc.threads)


def test_max_batch_caps_a_batch():
    enc = SlowEncoder(0.05)

    async def main():
        b = EncodeBatcher(enc, workers=1, max_batch=4)
        await b.start()
        try:
            await asyncio.gather(*[b.encode([str(i)], [""]) for i in range(12)])
        finally:
            await b.stop()

    _run(main())
    assert max(enc.calls) <= 4 and sum(enc.calls) == 12


def test_event_loop_stays_free_while_encoding():
    enc = SlowEncoder(0.5)

    async def main():
        b = EncodeBatcher(enc, workers=2)
        await b.start()
        try:
            job = asyncio.create_task(b.encode(["1"], [""]))
            t0 = time.perf_counter()
            await asyncio.sleep(0.05)  # would wait for the encode if it ran on the loop
            ticked = time.perf_counter() - t0
            await job
            return ticked
        finally:
            await b.stop()

    assert _run(main()) < 0.3


def test_workers_encode_in_parallel():
    enc = SlowEncoder(0.4)

    async def main():
        b = EncodeBatcher(enc, workers=2)
        await b.start()
        try:
            t0 = time.perf_counter()
            first = asyncio.create_task(b.encode(["1"], [""]))
            await asyncio.sleep(0.05)  # the first worker is busy; the second takes the next request
            await asyncio.gather(first, b.encode(["2"], [""]))
            return time.perf_counter() - t0
        finally:
            await b.stop()

    assert _run(main()) < 0.75 and enc.calls == [1, 1]


def test_errors_reach_every_waiting_request():
    enc = SlowEncoder(0.05, fail=True)

    async def main():
        b = EncodeBatcher(enc, workers=1)
        await b.start()
        try:
            return await asyncio.gather(*[b.encode([str(i)], [""]) for i in range(3)], return_exceptions=True)
        finally:
            await b.stop()

    out = _run(main())
    assert all(isinstance(x, ValueError) and "exploded" in str(x) for x in out)


class PoisonEncoder(SlowEncoder):
    """Fails any call that contains the snippet "bad" (like a tokenizer given a lone surrogate)."""

    def __call__(self, codes: list[str], languages: list[str]) -> np.ndarray:
        if "bad" in codes:
            self.calls.append(len(codes))
            raise ValueError("cannot tokenize")
        return super().__call__(codes, languages)


def test_one_bad_request_fails_only_itself():
    enc = PoisonEncoder(0.05)

    async def main():
        b = EncodeBatcher(enc, workers=1, max_batch=64)
        await b.start()
        try:
            codes = ["bad" if i in (3, 7) else str(i) for i in range(12)]
            out = await asyncio.gather(*[b.encode([c], [""]) for c in codes], return_exceptions=True)
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
        _run(EncodeBatcher(SlowEncoder()).encode(["1"], [""]))


def test_default_workers_give_each_worker_two_threads():
    from conba.serve.app import default_workers

    assert [default_workers(c) for c in (1, 2, 3, 4, 16)] == [1, 1, 1, 2, 8]
