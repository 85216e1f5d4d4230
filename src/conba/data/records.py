"""Dataset records: the native grouped JSONL format and the older research pair format.

Grouped JSONL (one snippet per line)::

    {"id": "...", "group": "...", "language": "java", "code": "...", "source": "atcoder"}

Snippets that share ``group`` are functional clones. The research pair format has one anchor per
line with its positives and negatives; :func:`pairs_to_records` turns it into grouped records.
Commands that only read snippets (``conba encode``) also take plain snippet lines, ``group`` and even
``language`` left out (:func:`load_snippets`).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from conba.errors import ConbaError

LANGUAGES: tuple[str, ...] = (
    "python", "java", "cpp", "c", "csharp", "javascript", "typescript", "go", "rust",
    "kotlin", "php", "ruby", "scala", "swift", "perl",
)
LANGUAGE_ALIASES: dict[str, str] = {
    "py": "python", "python3": "python", "c++": "cpp", "cxx": "cpp", "cc": "cpp", "c#": "csharp",
    "cs": "csharp", "js": "javascript", "node": "javascript", "ts": "typescript", "golang": "go",
    "rs": "rust", "kt": "kotlin", "rb": "ruby", "pl": "perl",
}


class DataError(ConbaError, ValueError):
    """Bad input data. The message is one line that names the file and line."""


@dataclass(frozen=True)
class CodeRecord:
    id: str
    group: str
    language: str
    code: str
    source: str | None = None


@dataclass
class PairExample:
    """One anchor with same-task positives and other-task negatives (research pair format)."""

    code: str
    language: str
    positives: list[tuple[str, str]] = field(default_factory=list)  # (language, code)
    negatives: list[tuple[str, str]] = field(default_factory=list)


def normalize_language(name: str) -> str:
    key = str(name).strip().lower()
    return LANGUAGE_ALIASES.get(key, key)


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) of every non-blank line of a JSONL file; DataError naming file:line otherwise."""
    if not path.exists():
        raise DataError(f"{path}: file not found")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, expected a .jsonl file")
    if not path.is_file():  # a FIFO would block the read, a device would never end
        from conba.utils.io import file_kind

        raise DataError(f"{path}: is {file_kind(path.stat().st_mode)}, expected a .jsonl file")
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")  # a BOM, as editors on Windows write
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid UTF-8 ({exc.reason})") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(obj, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def _require_str(obj: dict, key: str, where: str, allow_empty: bool = False) -> str:
    if key not in obj:
        raise DataError(f"{where}: missing field '{key}'")
    value = obj[key]
    if not isinstance(value, str):
        raise DataError(f"{where}: field '{key}' must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise DataError(f"{where}: field '{key}' is empty")
    return value


def _report_unknown(path: Path, unknown: Counter, on_unknown: str) -> None:
    if not unknown:
        return
    listing = ", ".join(f"{lang} ({n})" for lang, n in unknown.most_common())
    msg = f"{path}: unknown language(s) {listing}; known: {', '.join(LANGUAGES)}"
    if on_unknown == "error":
        raise DataError(msg)
    if on_unknown == "warn":
        warnings.warn(msg + " (kept; they use the shared control code)", stacklevel=3)


def detect_format(path: str | Path) -> str:
    """'grouped' or 'pairs', judged from the first non-empty line."""
    path = Path(path)
    for lineno, obj in iter_json_lines(path):
        if "positive" in obj or "negative" in obj:
            return "pairs"
        if "group" in obj:
            return "grouped"
        raise DataError(
            f"{path}:{lineno}: neither grouped format (needs 'group') nor pair format (needs 'positive')"
        )
    raise DataError(f"{path}: no records (file is empty)")


def load_grouped(path: str | Path, on_unknown: str = "warn") -> list[CodeRecord]:
    """Read grouped JSONL. ``on_unknown``: 'warn' (keep and report), 'error', or 'keep'."""
    path = Path(path)
    records: list[CodeRecord] = []
    seen: dict[str, int] = {}
    unknown: Counter = Counter()
    for lineno, obj in iter_json_lines(path):
        where = f"{path}:{lineno}"
        group = obj.get("group")
        if isinstance(group, int):
            group = str(group)
            obj = {**obj, "group": group}
        rid = obj.get("id", f"{path.stem}/{lineno}")
        if not isinstance(rid, (str, int)):
            raise DataError(f"{where}: field 'id' must be a string")
        rid = str(rid)
        if rid in seen:
            raise DataError(f"{where}: duplicate id '{rid}' (first on line {seen[rid]})")
        seen[rid] = lineno
        language = normalize_language(_require_str(obj, "language", where))
        if language not in LANGUAGES:
            unknown[language] += 1
        source = obj.get("source")
        records.append(
            CodeRecord(
                id=rid,
                group=_require_str(obj, "group", where),
                language=language,
                code=_require_str(obj, "code", where),
                source=source if isinstance(source, str) else None,
            )
        )
    if not records:
        raise DataError(f"{path}: no records (file is empty)")
    _report_unknown(path, unknown, on_unknown)
    return records


def _code_list(obj: dict, key: str, where: str) -> list[str]:
    items = obj.get(key, [])
    if not isinstance(items, list):
        raise DataError(f"{where}: '{key}' must be a list")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise DataError(f"{where}: {key}[{i}] must be an object with 'code'")
        out.append(_require_str(item, "code", f"{where}: {key}[{i}]"))
    return out


def load_pairs(path: str | Path, on_unknown: str = "warn") -> list[PairExample]:
    """Read the research pair format (anchor + positives + negatives per line)."""
    path = Path(path)
    examples: list[PairExample] = []
    unknown: Counter = Counter()
    for lineno, obj in iter_json_lines(path):
        where = f"{path}:{lineno}"
        language = normalize_language(_require_str(obj, "language", where))
        pos, neg = obj.get("positive"), obj.get("negative")
        if not isinstance(pos, dict):
            raise DataError(f"{where}: missing or invalid 'positive' object")
        if neg is not None and not isinstance(neg, dict):
            raise DataError(f"{where}: 'negative' must be an object")
        neg = neg or {}
        pos_lang = normalize_language(_require_str(pos, "language_positive", where))
        neg_lang = normalize_language(neg.get("language_negative", pos_lang))
        positives = [(pos_lang, c) for c in _code_list(pos, "code_positive", where)]
        if not positives:
            raise DataError(f"{where}: 'code_positive' is empty; an anchor needs at least one positive")
        negatives = [(neg_lang, c) for c in _code_list(neg, "code_negative", where)]
        for lang in {language, pos_lang, neg_lang}:
            if lang not in LANGUAGES:
                unknown[lang] += 1
        examples.append(PairExample(_require_str(obj, "code", where), language, positives, negatives))
    if not examples:
        raise DataError(f"{path}: no records (file is empty)")
    _report_unknown(path, unknown, on_unknown)
    return examples


def pairs_to_records(examples: Iterable[PairExample], prefix: str = "pair") -> list[CodeRecord]:
    """Flatten pair examples into grouped records.

    Anchor and positives of line i form group ``{prefix}/i``. A negative whose code is already a
    member of some group joins it; otherwise it gets a group of its own. Identical (language, code)
    snippets appear once.
    """
    examples = list(examples)
    group_of: dict[tuple[str, str], str] = {}
    records: list[CodeRecord] = []

    def add(lang: str, code: str, group: str) -> None:
        key = (lang, code)
        if key in group_of:
            return
        group_of[key] = group
        records.append(CodeRecord(f"{prefix}/{len(records)}", group, lang, code))

    for i, ex in enumerate(examples):
        add(ex.language, ex.code, f"{prefix}/{i}")
        for lang, code in ex.positives:
            add(lang, code, f"{prefix}/{i}")
    for i, ex in enumerate(examples):
        for j, (lang, code) in enumerate(ex.negatives):
            add(lang, code, f"{prefix}/{i}/neg{j}")
    return records


def load_records(path: str | Path, on_unknown: str = "warn") -> list[CodeRecord]:
    """Load either format as grouped records."""
    path = Path(path)
    if detect_format(path) == "pairs":
        return pairs_to_records(load_pairs(path, on_unknown), prefix=path.stem)
    return load_grouped(path, on_unknown)


def load_many(paths: Iterable[str | Path], on_unknown: str = "warn") -> list[CodeRecord]:
    out: list[CodeRecord] = []
    for p in paths:
        out.extend(load_records(p, on_unknown))
    return out


def load_snippets(path: str | Path, language: str | None = None) -> list[tuple[str, str, str]]:
    """(id, language, code) of every snippet of a JSONL file: grouped or pair format (:func:`load_records`),
    or plain lines ``{"code": ..., "language": ..., "id": ...}`` where only ``code`` is required
    (``language`` defaults to ``language``, ``id`` to ``STEM/LINE``)."""
    path = Path(path)
    first = next(iter_json_lines(path), None)
    if first is None:
        raise DataError(f"{path}: no records (file is empty)")
    if "group" in first[1] or "positive" in first[1] or "negative" in first[1]:
        return [(r.id, r.language, r.code) for r in load_records(path)]
    out: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_json_lines(path):
        where = f"{path}:{lineno}"
        code = _require_str(obj, "code", where, allow_empty=True)
        if "language" in obj:
            lang = normalize_language(_require_str(obj, "language", where))
        elif language:
            lang = normalize_language(language)
        else:
            raise DataError(f"{where}: missing field 'language' (or name one for the whole file with -l LANG)")
        rid = obj.get("id", f"{path.stem}/{lineno}")
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            raise DataError(f"{where}: field 'id' must be a string")
        rid = str(rid)
        if rid in seen:
            raise DataError(f"{where}: duplicate id '{rid}' (first on line {seen[rid]})")
        seen[rid] = lineno
        out.append((rid, lang, code))
    return out
