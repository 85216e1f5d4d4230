"""Request limits of ``conba serve``: body size, snippets per request, characters per snippet, k, page size, and
the work one request may ask for (functions encoded, pairs mapped) on every endpoint.

The body size is enforced by :class:`BodyLimitMiddleware` before any JSON is parsed (by the
``Content-Length`` header, and by counting the bytes of chunked bodies); the others are checked
per endpoint and answered with one-line 4xx errors (413 for "too large", 422 for bad values).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from fastapi import HTTPException

Scope = dict[str, Any]


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 1_000_000   # whole request body
    max_snippets: int = 64            # snippets per /encode request
    max_chars: int = 20_000           # characters per snippet (query, compare side, encode item)
    max_k: int = 100                  # hits per /search
    max_page: int = 200               # clone classes per /clones page
    # source x target functions one /map scores: a float32 matrix of 100 MB, scored on the thread every
    # endpoint reads the index on (a larger map is `conba map`'s work, not one request's)
    max_map_pairs: int = 25_000_000

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    def check_code(self, code: str, what: str) -> None:
        if len(code) > self.max_chars:
            raise HTTPException(413, f"{what}: {len(code)} characters, the limit is {self.max_chars} per snippet")
        if not code.strip():
            raise HTTPException(422, f"{what}: empty code")

    def check_snippets(self, codes: Sequence[str]) -> None:
        if not codes:
            raise HTTPException(422, "snippets: give at least one snippet")
        if len(codes) > self.max_snippets:
            raise HTTPException(413, f"snippets: {len(codes)} given, the limit is {self.max_snippets} per request")
        for i, code in enumerate(codes):
            self.check_code(code, f"snippets[{i}]")

    def check_functions(self, codes: Sequence[str], what: str) -> None:
        """The work cap of every endpoint that encodes: what one request encodes counts as snippets (at most
        ``max_snippets`` of at most ``max_chars`` each), whether sent as snippets or extracted from a file."""
        if len(codes) > self.max_snippets:
            raise HTTPException(413, f"{what}: {len(codes)} functions to encode, the limit is {self.max_snippets} "
                                     "per request (the server's max_snippets; GET /health lists the limits)")
        for code in codes:
            if len(code) > self.max_chars:
                raise HTTPException(413, f"{what}: a function of {len(code)} characters, the limit is "
                                         f"{self.max_chars} per function (the server's max_chars)")

    def check_map(self, sources: int, targets: int) -> None:
        if sources * targets > self.max_map_pairs:
            raise HTTPException(413, f"map: {sources} source x {targets} target functions to score, the limit is "
                                     f"{self.max_map_pairs} pairs per request (the server's max_map_pairs); run "
                                     "`conba map` on the index instead")

    def check_k(self, k: int) -> None:
        if not 1 <= k <= self.max_k:
            raise HTTPException(422, f"k: must be between 1 and {self.max_k}, got {k}")


def known_languages() -> list[str]:
    """Every language name the model and the index know (:func:`conba.source.languages.known_languages`)."""
    from conba.source.languages import known_languages as known

    return known()


def check_language(name: str | None, what: str) -> str | None:
    """The normalised language name (aliases such as ``py`` or ``c++`` accepted), None for none, or 422
    (the check ``conba search -l`` and ``conba compare --language-a`` make too)."""
    from conba.errors import ConfigError
    from conba.source.languages import check_language as check

    try:
        return check(name, what)
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from None


class _TooLarge(HTTPException):
    """Raised from ``receive``: FastAPI passes HTTPExceptions on while reading a body (others become 400)."""

    def __init__(self, max_bytes: int):
        super().__init__(413, _too_large(max_bytes))


def _too_large(max_bytes: int) -> str:
    return f"request body too large: the limit is {max_bytes} bytes"


class BodyLimitMiddleware:
    """Pure ASGI middleware: 413 for request bodies over ``max_bytes`` (declared or streamed)."""

    def __init__(self, app: Any, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._reject(send)
            return
        seen = 0
        started = False

        async def counting_receive() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge(self.max_bytes)
            return message

        async def tracking_send(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._reject(send)

    async def _reject(self, send: Any) -> None:
        body = json.dumps({"detail": _too_large(self.max_bytes)}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
