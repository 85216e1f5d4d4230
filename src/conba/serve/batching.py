"""Batch the encoding of concurrent requests, off the event loop.

Requests put their snippets on a queue; ``workers`` consumer tasks each take the next request,
add every request already waiting (up to ``max_batch`` snippets), and run one ``encode`` call for
all of them in a thread pool of ``workers`` threads. An idle server thus answers a lone request at
once (no batching window, no added latency), and a busy one batches the requests that arrived
while its workers were encoding. When a batch's encode call fails, its requests are encoded again
one at a time, so only the request that caused the failure gets it. Search queries (``query=True``)
go through ``encode_query`` when one is given (a model's query prompt), in a call of their own.
Glossary: n snippets, d embedding size.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from conba.errors import ConfigError

EncodeFn = Callable[[list[str], list[str]], np.ndarray]  # (codes, languages) -> float32 (n, d)


@dataclass
class _Job:
    codes: list[str]
    languages: list[str]
    future: asyncio.Future = field(repr=False)
    query: bool = False  # a search query: encoded with ``encode_query`` (the model's query prompt)


@dataclass
class BatchStats:
    requests: int = 0
    batches: int = 0
    snippets: int = 0
    largest: int = 0  # most requests served by one encode call
    retried: int = 0  # requests encoded again one by one after their shared batch failed
    failed: int = 0   # requests whose own encoding failed

    def to_dict(self) -> dict[str, int]:
        return {"requests": self.requests, "batches": self.batches, "snippets": self.snippets,
                "largest_batch": self.largest, "retried": self.retried, "failed": self.failed}


class EncodeBatcher:
    """``await batcher.encode(codes, languages)`` -> float32 (n, d); call :meth:`start` inside the loop."""

    def __init__(self, encode: EncodeFn, workers: int = 1, max_batch: int = 64,
                 encode_query: EncodeFn | None = None):
        if workers < 1 or max_batch < 1:
            raise ConfigError("workers and max_batch must be >= 1")
        self._encode, self.workers, self.max_batch = encode, workers, max_batch
        self._encode_query = encode_query
        self.stats = BatchStats()
        self._queue: asyncio.Queue[_Job] | None = None
        self._tasks: list[asyncio.Task] = []
        self._pool: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="conba-encode")
        self._tasks = [asyncio.create_task(self._consume()) for _ in range(self.workers)]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    async def encode(self, codes: Sequence[str], languages: Sequence[str], query: bool = False) -> np.ndarray:
        if self._queue is None:
            raise RuntimeError("EncodeBatcher.start() was not called")
        future = asyncio.get_running_loop().create_future()
        await self._queue.put(_Job(list(codes), list(languages), future, query and self._encode_query is not None))
        return await future

    def _take_batch(self, first: _Job) -> list[_Job]:
        assert self._queue is not None
        jobs, size = [first], len(first.codes)
        while size < self.max_batch and not self._queue.empty():
            nxt = self._queue.get_nowait()
            if nxt.future.done():  # the client went away
                continue
            jobs.append(nxt)
            size += len(nxt.codes)
        return jobs

    async def _consume(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            first = await self._queue.get()
            if first.future.done():
                continue
            jobs = self._take_batch(first)
            for query in (False, True):  # documents and queries (their own prompt) in calls of their own
                part = [j for j in jobs if j.query is query]
                if part:
                    await self._run(loop, part)

    async def _run(self, loop: asyncio.AbstractEventLoop, jobs: list[_Job]) -> None:
        """Encode ``jobs`` in one call; when that fails and there are several, encode each alone, so
        one bad request fails only itself and not the requests that happened to share its batch."""
        codes = [c for j in jobs for c in j.codes]
        languages = [lang for j in jobs for lang in j.languages]
        encode = self._encode_query if jobs[0].query and self._encode_query is not None else self._encode
        try:
            vectors = await loop.run_in_executor(self._pool, encode, codes, languages)
        except Exception as exc:
            if len(jobs) > 1:
                self.stats.retried += len(jobs)
                for j in jobs:
                    if not j.future.done():
                        await self._run(loop, [j])
                return
            if not jobs[0].future.done():
                jobs[0].future.set_exception(exc)
            self.stats.failed += 1
            return
        self.stats.requests += len(jobs)
        self.stats.batches += 1
        self.stats.snippets += len(codes)
        self.stats.largest = max(self.stats.largest, len(jobs))
        start = 0
        for j in jobs:
            part = vectors[start:start + len(j.codes)]
            start += len(j.codes)
            if not j.future.done():
                j.future.set_result(part)
