"""Unlabelled code for continued pretraining: read folders / JSONL, cut into token windows.

A folder contributes every source file the indexer would pick up (``.gitignore`` respected, known
code extensions); a JSONL file contributes the ``code`` of every line (grouped format, the research
pair format with its positives and negatives, or any objects with a ``code`` field). Each text is
tokenised once and cut into consecutive windows of ``max_length - 2`` tokens, each wrapped in the
tokenizer's special tokens ([CLS] ... [SEP]).
"""

from __future__ import annotations

from pathlib import Path

from conba.data.records import DataError

MIN_WINDOW = 4  # windows with fewer real tokens are dropped


def _jsonl_codes(path: Path) -> list[str]:
    from conba.data import load_records
    from conba.data.records import iter_json_lines

    try:
        return [r.code for r in load_records(path, on_unknown="keep")]
    except DataError:
        pass
    codes = []
    for lineno, obj in iter_json_lines(path):
        if not isinstance(obj.get("code"), str):
            raise DataError(f"{path}:{lineno}: expected an object with a string field 'code'")
        codes.append(obj["code"])
    return codes


def _folder_codes(path: Path) -> list[str]:
    from conba.errors import SourceError
    from conba.source.walker import discover

    try:
        found = discover([path])
    except SourceError as exc:
        raise DataError(str(exc)) from None
    codes = []
    for cand in sorted(found.files, key=lambda c: c.path):
        raw = Path(cand.path).read_bytes()
        if b"\0" in raw[:8192]:
            continue  # binary
        codes.append(raw.decode("utf-8", errors="replace"))
    return codes


def read_texts(paths: list[str]) -> list[str]:
    """Every code text of ``paths`` (folders and/or JSONL files), empty texts left out."""
    texts: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or folder")
        texts += _folder_codes(path) if path.is_dir() else _jsonl_codes(path)
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise DataError(f"no code found in {', '.join(paths)}")
    return texts


def windows(texts: list[str], tokenizer, max_length: int, max_windows: int = 0) -> list[list[int]]:
    """Token id windows (with special tokens) of at most ``max_length`` tokens."""
    first = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    last = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    head, tail = ([first] if first is not None else []), ([last] if last is not None else [])
    size = max_length - len(head) - len(tail)
    out: list[list[int]] = []
    for start in range(0, len(texts), 1024):
        batch = tokenizer(texts[start:start + 1024], add_special_tokens=False, verbose=False)["input_ids"]
        for ids in batch:
            cut = [ids[i:i + size] for i in range(0, len(ids), size)]
            if max_windows:
                cut = cut[:max_windows]
            out += [head + c + tail for c in cut if len(c) >= MIN_WINDOW]
    if not out:
        raise DataError(f"no window of at least {MIN_WINDOW} tokens in the pretraining data")
    return out
