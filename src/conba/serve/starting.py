"""``conba serve`` listens at once and loads its model behind: an ASGI app in front of the real one.

Building the app (:func:`conba.serve.app.create_app`: the model, the index, the encoding workers) takes from
under a second (the ONNX query encoder) to tens of seconds (torch, a first export). :class:`StartingApp`
answers while it builds: ``GET /health`` says ``{"status": "loading", ...}``; any other request waits until
the app is ready and is then answered by it (or gets a 503 when building failed). Building runs on a thread
once the server listens; the real app's own lifespan (workers, index polling) is entered when it is built and
left when the server stops. A failure to build stops the server; :attr:`StartingApp.error` holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

__all__ = ["StartingApp"]
READY_WAIT = 600.0  # seconds a request waits for the model before a 503


class StartingApp:
    """ASGI app: answers ``/health`` while ``build()`` runs on a thread, then hands every request to its app.
    ``on_ready(app, seconds)`` runs once it is ready; ``stop()`` is called when building fails."""

    def __init__(self, build: Callable[[], Any], *, loading: str, on_ready: Callable[[Any, float], None] | None = None,
                 stop: Callable[[], None] | None = None, token: str | None = None):
        self._build, self._loading, self._on_ready, self._stop = build, loading, on_ready, stop
        self._token = token or None  # the app's bearer token: /health asks for it while loading too
        self.app: Any = None
        self.error: BaseException | None = None
        self._ready = asyncio.Event()  # made anew at each start-up (lifespan); binds its loop on first use
        self._stack = contextlib.AsyncExitStack()
        self._task: asyncio.Task | None = None
        self._started = time.monotonic()

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if self.app is None and self.error is None:
            if scope["type"] == "http" and scope.get("path") == "/health":
                if not self._authorized(scope):
                    return await _json(send, 401, {"detail": "missing or wrong bearer token: send "
                                                             "'Authorization: Bearer TOKEN'"})
                return await _json(send, 200, {"status": "loading", "detail": self._loading,
                                               "seconds": round(time.monotonic() - self._started, 1)})
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ready.wait(), READY_WAIT)
        if self.app is None:
            if scope["type"] != "http":
                return None
            detail = f"the server could not start: {self.error}" if self.error else "the model is still loading"
            return await _json(send, 503, {"status": "error" if self.error else "loading", "detail": detail})
        return await self.app(scope, receive, send)

    def _authorized(self, scope: dict) -> bool:
        import secrets

        if self._token is None:
            return True
        headers = dict(scope.get("headers") or [])
        scheme, _, given = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), self._token.encode())

    async def _lifespan(self, receive: Callable, send: Callable) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._ready = asyncio.Event()
                self._task = asyncio.create_task(self._start())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._task is not None and not self._task.done():
                    self._task.cancel()
                    await asyncio.gather(self._task, return_exceptions=True)
                await self._stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        try:
            app = await asyncio.to_thread(self._build)
            await self._stack.enter_async_context(app.router.lifespan_context(app))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported by the caller (conba serve: a one-line error, exit 1)
            self.error = exc
            self._ready.set()
            if self._stop is not None:
                self._stop()
            return
        self.app = app
        self._ready.set()
        if self._on_ready is not None:
            self._on_ready(app, time.monotonic() - self._started)


async def _json(send: Callable, status: int, body: dict) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"5"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
