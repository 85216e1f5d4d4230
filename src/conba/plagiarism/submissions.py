"""The submissions of an assignment folder: each entry (a file, or a folder of files) is one submission.

Files are found by the project's walker (``.gitignore``, vendored and hidden folders skipped) and read by its
reader (binary, non-UTF-8, generated, minified and empty files are skipped, with the reason). A file whose
language conba does not know, or that no lexer can tokenise, is skipped too; every skip is counted and can be
listed. A submission left with no readable file is skipped as a whole. A conba index folder is never a
submission: an entry that is one is skipped, and FOLDER itself being one (or lying inside one) is an error.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from conba.errors import SourceError, UsageError
from conba.source.filters import Skip, is_excluded_dir, read_source
from conba.source.walker import discover
from conba.syntax.languages import detect_language

INDEX_MARKER = "index.sqlite"  # the database file of a conba index folder (conba.index.storage.index.DB_NAME)


@dataclass
class SourceFile:
    """One file of a submission: its path relative to the submission (the file name for a one-file one)."""

    path: str
    language: str
    text: str


@dataclass
class Submission:
    """One entry of the folder: ``name`` as it appears there, its files in path order."""

    name: str
    files: list[SourceFile]

    @property
    def languages(self) -> list[str]:
        return sorted({f.language for f in self.files})

    @property
    def lines(self) -> int:
        return sum(f.text.count("\n") + 1 for f in self.files)


@dataclass
class Loaded:
    """The submissions found, and what was skipped: ``(path, reason)``."""

    submissions: list[Submission] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def skip_counts(self) -> dict[str, int]:
        return dict(Counter(reason for _, reason in self.skipped))


def is_index_folder(path: Path) -> bool:
    """Whether ``path`` is a conba index folder (it holds the index database)."""
    return (path / INDEX_MARKER).is_file()


def _inside_index(folder: Path) -> Path | None:
    for p in (folder, *folder.parents):
        if is_index_folder(p):
            return p
    return None


def _read(path: Path, shown: str, out: Loaded) -> SourceFile | None:
    from conba.plagiarism.tokens import has_lexer

    language = detect_language(path)
    if language is None:
        out.skipped.append((shown, "unsupported language"))
        return None
    if not has_lexer(language):
        out.skipped.append((shown, f"no tokenizer for {language}"))
        return None
    try:
        text = read_source(path)
    except Skip as exc:
        out.skipped.append((shown, exc.reason))
        return None
    return SourceFile(shown, language, text)


def read_entry(entry: Path, out: Loaded) -> Submission | None:
    """The submission at ``entry`` (a file or a folder), or None (recorded in ``out.skipped``) when nothing
    readable is in it."""
    name = entry.name
    if entry.is_dir():
        if is_index_folder(entry):
            out.skipped.append((name, "conba index folder"))
            return None
        files = []
        found = discover([entry])
        for path, reason in found.skipped:
            out.skipped.append((f"{name}/{os.path.relpath(path, entry)}", reason))
        for cand in sorted(found.files, key=lambda c: c.path):
            rel = os.path.relpath(cand.path, os.path.realpath(entry))
            f = _read(Path(cand.path), rel, out)
            if f is not None:
                files.append(f)
        if not files:
            out.skipped.append((name, "no readable source file"))
            return None
        return Submission(name, files)
    f = _read(entry, name, out)
    return Submission(name, [f]) if f is not None else None


def load_folder(folder: str | os.PathLike) -> Loaded:
    """Every submission of ``folder`` in name order; a one-line error when FOLDER is missing, not a folder,
    a conba index (or inside one)."""
    root = Path(folder)
    if not root.exists():
        raise SourceError(f"{folder}: no such folder")
    if not root.is_dir():
        raise UsageError(f"{folder}: is a file; give the folder that holds one entry (file or folder) per "
                         "submission")
    index = _inside_index(root.resolve())
    if index is not None:
        raise UsageError(f"{folder}: is inside the conba index {index}; give the folder of submissions")
    out = Loaded()
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise SourceError(f"{folder}: cannot list ({exc.strerror or exc})") from None
    for entry in entries:
        if entry.name.startswith(".") or (entry.is_dir() and is_excluded_dir(entry)):
            continue
        sub = read_entry(entry, out)
        if sub is not None:
            out.submissions.append(sub)
    return out


def load_base(path: str | os.PathLike) -> Submission:
    """The starter code at ``path`` (a file or a folder); a one-line error when nothing readable is there."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"{path}: no such file or folder (--base)")
    out = Loaded()
    sub = read_entry(p, out)
    if sub is None:
        why = "; ".join(f"{n}: {r}" for n, r in out.skipped[:3]) or "nothing readable"
        raise SourceError(f"{path}: no readable starter code (--base): {why}")
    return sub
