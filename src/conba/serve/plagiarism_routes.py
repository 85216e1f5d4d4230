"""``POST /plagiarism`` of ``conba serve``: a plagiarism check of submissions sent in the body.

The body carries the submissions themselves (each a name and its files' code; a file's language from
``language`` or its path's extension), and optionally the starter code as ``base``; nothing is read from disk
and no model runs. The work is capped per request: at most ``MAX_SUBMISSIONS`` submissions of at most
``MAX_FILES`` files each, every file within the server's characters-per-snippet limit (and the whole body
within its body limit), the evidence for at most ``MAX_EVIDENCE`` pairs below the threshold; the check runs in
a worker thread. The answer is the JSONL records of ``conba plagiarism`` as one object: ``pairs``,
``clusters``, ``summary`` and ``skipped``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException
from pydantic import Field

from conba.serve.limits import check_language
from conba.serve.schemas import Text, _Request

if TYPE_CHECKING:
    from conba.serve.app import ServeState

MAX_SUBMISSIONS = 200
MAX_FILES = 50
MAX_EVIDENCE = 20


class FileIn(_Request):
    path: Text = Field(description="The file's name in its submission; its extension gives the language.",
                       examples=["main.py"])
    code: Text = Field(description="The file's text.", examples=["def solve(xs):\n    return sum(xs)\n"])
    language: Text | None = Field(None, description="Language of `code` (default: from `path`).",
                                  examples=["python"])


class SubmissionIn(_Request):
    name: Text = Field(description="The submission's name (a student, a file name).", examples=["alice"])
    files: list[FileIn] = Field(description="Its files.",
                                examples=[[{"path": "main.py", "code": "def solve(xs):\n    return sum(xs)\n"}]])


class PlagiarismRequest(_Request):
    submissions: list[SubmissionIn] = Field(
        description=f"The submissions to compare, one per student: at least 2, at most {MAX_SUBMISSIONS}.",
        examples=[[{"name": "alice", "files": [{"path": "a.py", "code": "def f(xs):\n    return sum(xs)\n"}]},
                   {"name": "bob", "files": [{"path": "b.js", "code": "function g(a) { return a.length; }\n"}]}]])
    base: SubmissionIn | None = Field(None, description="Starter code: its lines and features count for no pair.",
                                      examples=[{"name": "starter", "files": [{"path": "grades.py",
                                                                               "code": "import sys\n"}]}])
    threshold: float | None = Field(None, ge=0, le=1, description="Score a pair needs to be suspicious "
                                    "(default: the calibrated one).", examples=[0.995])
    top: int = Field(20, ge=0, description="Candidate partners per submission (0: every pair).", examples=[20])


def _submission(sub: SubmissionIn, what: str, max_chars: int, skipped: list[tuple[str, str]]) -> Any:
    from conba.plagiarism.submissions import SourceFile, Submission
    from conba.plagiarism.tokens import has_lexer
    from conba.syntax.languages import detect_language

    if len(sub.files) > MAX_FILES:
        raise HTTPException(413, f"{what}.files: {len(sub.files)} given, the limit is {MAX_FILES} per submission")
    files = []
    for k, f in enumerate(sub.files):
        if len(f.code) > max_chars:
            raise HTTPException(413, f"{what}.files[{k}]: {len(f.code)} characters, the limit is {max_chars}")
        language = check_language(f.language, f"{what}.files[{k}].language") or detect_language(f.path)
        if language is None or not has_lexer(language):
            skipped.append((f"{sub.name}/{f.path}", "unsupported language"))
            continue
        files.append(SourceFile(f.path, language, f.code))
    return Submission(sub.name, files) if files else None


def add_plagiarism_routes(api: APIRouter, state: ServeState) -> None:
    limits = state.limits

    @api.post("/plagiarism", tags=["plagiarism"])
    async def plagiarism(req: PlagiarismRequest) -> dict[str, Any]:
        """Pairs of the submissions ranked by suspicion (as `conba plagiarism`), with clusters and a summary."""
        from conba.errors import ConbaError
        from conba.plagiarism.check import THRESHOLD, check_submissions

        if len(req.submissions) > MAX_SUBMISSIONS:
            raise HTTPException(413, f"submissions: {len(req.submissions)} given, the limit is {MAX_SUBMISSIONS}")
        names = [s.name for s in req.submissions]
        if len(set(names)) != len(names):
            raise HTTPException(422, "submissions: names must be unique")
        skipped: list[tuple[str, str]] = []
        subs = [s for i, x in enumerate(req.submissions)
                if (s := _submission(x, f"submissions[{i}]", limits.max_chars, skipped)) is not None]
        base = _submission(req.base, "base", limits.max_chars, skipped) if req.base is not None else None
        threshold = THRESHOLD if req.threshold is None else req.threshold
        try:
            report = await asyncio.to_thread(check_submissions, subs, base, top=req.top, threshold=threshold,
                                             evidence_pairs=MAX_EVIDENCE, skipped=skipped, where="submissions")
        except ConbaError as exc:
            raise HTTPException(422, str(exc)) from None
        return {"pairs": [p.to_dict() for p in report.pairs], "clusters": report.clusters,
                "summary": report.summary(), "skipped": [{"name": n, "reason": r} for n, r in report.skipped]}
