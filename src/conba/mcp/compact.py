"""Answers an agent can afford: short keys, ``file:line`` locations, a few lines of code, and a token budget.

Every tool answers one compact JSON object. Lists (hits, missing functions, clones) are cut from the end until
the text fits ``max_tokens``, estimated at :data:`CHARS_PER_TOKEN` characters a token (code and JSON run close
to that with common tokenizers); what was cut is said in ``"cut"``, so the agent can page or raise the budget.
Code excerpts keep their first lines and end with a ``... (+N lines)`` marker.
"""

from __future__ import annotations

import json
from typing import Any

from conba.clones.display import display_path
from conba.errors import ConfigError
from conba.source.records import Unit

CHARS_PER_TOKEN = 4
DEFAULT_TOKENS = 2000
MIN_TOKENS, MAX_TOKENS = 200, 20_000
MAX_LINE_CHARS = 120
MAX_CODE_LINES = 40


def check_budget(max_tokens: int) -> int:
    if not MIN_TOKENS <= max_tokens <= MAX_TOKENS:
        raise ConfigError(f"max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS}, got {max_tokens}")
    return max_tokens


def check_code_lines(code_lines: int) -> int:
    if not 0 <= code_lines <= MAX_CODE_LINES:
        raise ConfigError(f"code_lines must be between 0 and {MAX_CODE_LINES}, got {code_lines}")
    return code_lines


def excerpt(code: str, lines: int) -> str:
    """The first ``lines`` lines of ``code`` (each cut at :data:`MAX_LINE_CHARS`), then ``... (+N lines)``."""
    rows = code.rstrip("\n").split("\n")
    kept = [r if len(r) <= MAX_LINE_CHARS else r[:MAX_LINE_CHARS] + "..." for r in rows[:lines]]
    if len(rows) > lines:
        kept.append(f"... (+{len(rows) - lines} lines)")
    return "\n".join(kept)


def where(unit: Unit) -> str:
    """``file:start-end`` as people and agents open it."""
    return f"{display_path(unit.file)}:{unit.start_line}-{unit.end_line}"


def brief(unit: Unit, score: float | None = None, code_lines: int = 0) -> dict[str, Any]:
    """One function in a few fields: at (file:lines), name, language, score, and its first lines of code."""
    d: dict[str, Any] = {"at": where(unit), "name": unit.qualname, "lang": unit.language}
    if score is not None:
        d["score"] = round(float(score), 3)
    if code_lines and unit.code:
        d["code"] = excerpt(unit.code, code_lines)
    return d


def dumps(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def fit(body: dict[str, Any], key: str | None, max_tokens: int, hint: str = "raise max_tokens") -> str:
    """``body`` as JSON text within ``max_tokens``: items of ``body[key]`` are dropped from the end (then the
    code of those left) until it fits; ``"cut"`` says how many were left out and what to do."""
    limit = max_tokens * CHARS_PER_TOKEN
    text = dumps(body)
    if len(text) <= limit or key is None or not body.get(key):
        return text
    items = list(body[key])
    total = len(items)
    lo, hi = 0, len(items)  # the most items that fit, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        trial = {**body, key: items[:mid], "cut": f"{total - mid} of {total} {key} left out to stay within "
                                                  f"{max_tokens} tokens; {hint}"}
        if len(dumps(trial)) <= limit:
            lo = mid
        else:
            hi = mid - 1
    kept = items[:max(lo, 1)]
    if lo == 0 and isinstance(kept[0], dict):  # even one item is too long: drop its code
        kept = [{k: v for k, v in kept[0].items() if k != "code"}]
    return dumps({**body, key: kept, "cut": f"{total - len(kept)} of {total} {key} left out to stay within "
                                            f"{max_tokens} tokens; {hint}"})
