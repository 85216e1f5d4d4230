"""Old request field names of ``conba serve``: still accepted for a while, answered with a warning.

One meaning per field, the same as the CLI's: ``query_language`` is the language of the query (``conba search
--query-language``), ``result_language`` keeps only results in that language (``conba search
--result-language``). ``language`` was the old name of the filter; a client that sent ``"language": "python"``
for a Python snippet silently got Python-only hits. It still works, and the answer says it is deprecated three
ways: a ``warnings`` entry in the JSON body, a ``Deprecation: true`` header (RFC 9745) and a line in the
server's log.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import HTTPException, Response

# uvicorn's own error logger: its handler is configured by `conba serve`, so the line appears among the server's
LOG = logging.getLogger("uvicorn.error")

# endpoint field -> (its new name, what the new name means)
RENAMED: dict[str, tuple[str, str]] = {
    "language": ("result_language", "it keeps only results in that language; the query's own language is "
                                    "query_language"),
}


def renamed_value(request: Any, old: str, response: Response, warnings: list[str], endpoint: str) -> Any:
    """The value of the field ``old`` was renamed to: the new field's, else the old one's (with a warning in
    ``warnings``, the ``Deprecation`` header on ``response`` and a log line); 422 when both disagree."""
    new, meaning = RENAMED[old]
    old_value, new_value = getattr(request, old), getattr(request, new)
    if old_value is None:
        return new_value
    if new_value is not None and new_value != old_value:
        raise HTTPException(422, f"{old}: the deprecated name of {new}, which says otherwise; send {new} only")
    message = f"'{old}' is deprecated: send '{new}' ({meaning})"
    warnings.append(message)
    response.headers["Deprecation"] = "true"
    LOG.warning("%s: %s", endpoint, message)
    return old_value
