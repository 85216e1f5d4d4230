"""``conba.Client``: the Python client of ``conba serve``, with the same calls as its HTTP API.

>>> import conba
>>> with conba.Client("http://127.0.0.1:8000") as c:     # token: CONBA_TOKEN, or token=...
...     hits = c.search("def gcd(a, b): ...", k=5, query_language="python", result_language="java")
...     files = c.search_files(open("Sort.java").read(), name="Sort.java", k=3)["hits"]  # whole files
...     c.compare("def f(x): return 2*x", "int f(int x) { return x*2; }", language_b="java")
...     vectors = c.encode(["def add(a, b): return a + b"])    # float32 (n, d)
...     for cls in c.iter_clones(cross_language_only=True): ...
...     port = c.map("java", "python", only="missing")        # port coverage, as `conba map`

Needs httpx (``pip install 'conba[serve]'``); it imports neither torch nor the model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

TOKEN_ENV = "CONBA_TOKEN"


def _renamed(result_language: str | None, language: str | None) -> str | None:
    """``result_language``, or the value passed under its deprecated name ``language`` (with a warning)."""
    if language is None:
        return result_language
    import warnings

    warnings.warn("Client.search(language=...) is deprecated: it filters the results; pass result_language "
                  "(and query_language for the query's own language)", DeprecationWarning, stacklevel=3)
    if result_language is not None and result_language != language:
        raise ValueError("language is the deprecated name of result_language: pass result_language only")
    return language


class ServerError(RuntimeError):
    """The server answered with an error; ``status`` is the HTTP status, ``detail`` its message."""

    def __init__(self, status: int, detail: str):
        super().__init__(f"{status}: {detail}")
        self.status, self.detail = status, detail


class Client:
    """A connection to ``conba serve`` at ``url`` (kept open; use as a context manager or ``close()``)."""

    def __init__(self, url: str = "http://127.0.0.1:8000", token: str | None = None, timeout: float = 60.0):
        try:
            import httpx
        except ImportError:
            raise ImportError("conba.Client needs httpx: pip install 'conba[serve]'") from None
        token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        r = self._http.request(method, path, **kwargs)
        if r.status_code >= 400:
            try:
                detail = r.json().get("detail", r.text)
            except ValueError:
                detail = r.text
            raise ServerError(r.status_code, str(detail))
        return r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text

    # ------------------------------------------------------------------ the API
    def search(self, code: str, k: int = 10, result_language: str | None = None, query_language: str | None = None,
               include_code: bool = False, *, language: str | None = None) -> list[dict[str, Any]]:
        """Hits (rank, score, file, name, language, start_line, end_line, kind[, code]), best first.
        ``query_language``: the query's own language; ``result_language``: only hits in that language (as
        ``conba search --query-language / --result-language``). ``language`` is the deprecated name of
        ``result_language``."""
        body = {"code": code, "k": k, "result_language": _renamed(result_language, language),
                "query_language": query_language, "include_code": include_code}
        return self._answer(self._call("POST", "/search", json=body))["hits"]

    def search_files(self, code: str | None = None, *, file: str | None = None, name: str | None = None,
                     query_language: str | None = None, k: int = 10, result_language: str | None = None,
                     same_language: bool = False, language: str | None = None) -> dict[str, Any]:
        """The served index's files most similar to a whole file: ``code`` (its text; the language from
        ``query_language`` or ``name``'s extension) or ``file`` (a file of the index, as a hit names it).
        Returns {query: {language, functions[, file]}, hits: [{rank, score, vector_score, file, language,
        functions}]}, other languages only unless ``same_language``; ``result_language`` keeps one language
        (``language`` is its deprecated name)."""
        body = {"code": code, "file": file, "name": name, "query_language": query_language, "k": k,
                "result_language": _renamed(result_language, language), "same_language": same_language}
        return self._answer(self._call("POST", "/search/files",
                                       json={key: v for key, v in body.items() if v is not None}))

    @staticmethod
    def _answer(body: dict[str, Any]) -> dict[str, Any]:
        """The body, after turning the server's ``warnings`` (deprecated fields) into Python warnings."""
        import warnings

        for message in body.get("warnings") or []:
            warnings.warn(f"conba serve: {message}", DeprecationWarning, stacklevel=3)
        return body

    def compare(self, a: str, b: str, language_a: str | None = None, language_b: str | None = None,
                threshold: float | str = "auto") -> dict[str, Any]:
        """{score, threshold, clone, languages} for two snippets."""
        body = {"a": a, "b": b, "language_a": language_a, "language_b": language_b, "threshold": threshold}
        return self._call("POST", "/compare", json=body)

    def encode(self, snippets: str | Sequence[str], languages: str | Sequence[str | None] | None = None) -> Any:
        """Embeddings, float32 (n, d) numpy (one snippet: (d,)); L2-normalised, in input order."""
        import numpy as np

        single = isinstance(snippets, str)
        items = [snippets] if single else list(snippets)
        langs = languages if languages is None or isinstance(languages, str) else list(languages)
        out = self._call("POST", "/encode", json={"snippets": items, "languages": langs})
        vectors = np.asarray(out["vectors"], dtype=np.float32).reshape(len(items), out["dim"])
        return vectors[0] if single else vectors

    def clones(self, threshold: float | str = "auto", cross_language_only: bool = False, min_lines: int = 1,
               offset: int = 0, limit: int = 50, include_code: bool = False) -> dict[str, Any]:
        """One page of clone classes: {threshold, total, offset, limit, classes: [...]}."""
        params = {"threshold": str(threshold), "cross_language_only": cross_language_only,
                  "min_lines": min_lines, "offset": offset, "limit": limit, "include_code": include_code}
        return self._call("GET", "/clones", params=params)

    def iter_clones(self, threshold: float | str = "auto", cross_language_only: bool = False, min_lines: int = 1,
                    page_size: int = 100, include_code: bool = False) -> Iterator[dict[str, Any]]:
        """Every clone class, fetched a page at a time."""
        offset = 0
        while True:
            page = self.clones(threshold, cross_language_only, min_lines, offset, page_size, include_code)
            yield from page["classes"]
            offset += len(page["classes"])
            if not page["classes"] or offset >= page["total"]:
                return

    def file_clones(self, threshold: float | str = "auto", cross_language_only: bool = False, min_lines: int = 1,
                    offset: int = 0, limit: int = 50, include_code: bool = False) -> dict[str, Any]:
        """One page of classes of whole files (as `conba clones --files`): {threshold, total, classes: [...]},
        each member a file (kind "file")."""
        params = {"threshold": str(threshold), "cross_language_only": cross_language_only,
                  "min_lines": min_lines, "offset": offset, "limit": limit, "include_code": include_code}
        return self._call("GET", "/clones/files", params=params)

    def report(self, threshold: float | str = "auto", cross_language_only: bool = False) -> str:
        """The HTML clone report of the served index."""
        params = {"threshold": str(threshold), "cross_language_only": cross_language_only}
        return self._call("GET", "/report", params=params)

    def map(self, source_language: str, target_language: str, threshold: float | str = "auto",
            margin: float = 0.02, only: str | None = None, keep_trivial: bool = False,
            include_code: bool = False) -> dict[str, Any]:
        """Port coverage of the served index (as `conba map`): {summary, functions, files}; each function has
        its status (matched, ambiguous, missing), score, source and target."""
        body = {"source_language": source_language, "target_language": target_language, "threshold": threshold,
                "margin": margin, "only": only, "keep_trivial": keep_trivial, "include_code": include_code}
        return self._call("POST", "/map", json=body)

    def health(self) -> dict[str, Any]:
        """{status, model: {name, fingerprint, view, ...}, index: {functions, generation, ...}, limits, ...}."""
        return self._call("GET", "/health")
