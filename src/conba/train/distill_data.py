"""What ``conba distill`` trains on: code snippets with the teacher's vectors.

Glossary: s snippets, d embedding width.

The snippets are the ``code`` of grouped JSONL files (labels are not used) plus, from folders of
real code, every function conba's index would extract (:func:`real_code_snippets`). Every snippet
goes through the teacher's input view once; the student learns from the viewed text, exactly
what it sees when it encodes. The teacher's vectors (s, d) are computed once and cached in the run
folder in chunks, so a killed run resumes without encoding them again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conba.errors import UsageError
from conba.utils.cache import ChunkedArrays, cache_key, sequence_key

TEACHER_CHUNK = 1024  # snippets per cached chunk of teacher vectors
MIN_LINES = 3  # real-code functions shorter than this are skipped (getters, one-line wrappers)


@dataclass
class Snippets:
    codes: list[str]       # as the student reads them (after the input view)
    languages: list[str]
    sources: list[str]     # record id, or "FILE:LINE" of a real-code function
    from_source: int = 0   # how many are real-code functions (--source)

    def __len__(self) -> int:
        return len(self.codes)

    def key(self) -> str:
        """Cache key of the snippets: their languages and texts, in order."""
        return sequence_key(f"{lang}\0{code}" for code, lang in zip(self.codes, self.languages))


def real_code_snippets(paths: Iterable[str], limit: int = 0, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """Functions (at least ``MIN_LINES`` lines, distinct by text) from the source files under ``paths``,
    cut as ``conba index`` cuts them; a seeded sample of ``limit`` when there are more (0: all).
    Returns (codes, languages, sources)."""
    from conba.source.extract import extract_units
    from conba.source.walker import discover

    found: dict[str, tuple[str, str]] = {}
    for cand in discover(list(paths)).files:
        try:
            text = Path(cand.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # unreadable or not UTF-8: as the index skips it
        for unit in extract_units(cand.path, text, cand.language):
            if unit.kind == "function" and unit.end_line - unit.start_line + 1 >= MIN_LINES:
                found.setdefault(unit.code, (unit.language, f"{cand.path}:{unit.start_line}"))
    items = sorted(found.items(), key=lambda kv: kv[1][1])
    if limit and len(items) > limit:
        items = random.Random(seed).sample(items, limit)
    return [c for c, _ in items], [lang for _, (lang, _) in items], [src for _, (_, src) in items]


def collect_snippets(data: list[str], source: list[str], view: str, limit: int, source_limit: int,
                     seed: int) -> Snippets:
    """The training snippets, viewed with ``view``: a seeded sample of ``limit`` records of the ``data``
    files (0: all) and at most ``source_limit`` functions from the files under ``source``, then the
    duplicates by (language, text) dropped."""
    from conba.data import load_many
    from conba.syntax.view import apply_views

    records = load_many(data) if data else []
    if limit and len(records) > limit:  # sampled first, duplicates dropped after (so -n N gives at most N)
        records = random.Random(seed).sample(records, limit)
    codes = [r.code for r in records]
    langs = [r.language for r in records]
    sources = [r.id for r in records]
    n_records = len(records)
    if source:
        c, lang, src = real_code_snippets(source, source_limit, seed)
        codes += c
        langs += lang
        sources += src
    first: dict[tuple[str, str], int] = {}  # each (language, code) once: its first occurrence
    for i, pair in enumerate(zip(langs, codes)):
        first.setdefault(pair, i)
    keep = sorted(first.values())
    if not keep:
        raise UsageError("no training snippets: pass --data FILE.jsonl and/or --source DIR with source files")
    codes, langs, sources = [codes[i] for i in keep], [langs[i] for i in keep], [sources[i] for i in keep]
    if view != "raw":
        codes, _ = apply_views(codes, langs, view)
    return Snippets(codes, langs, sources, from_source=sum(i >= n_records for i in keep))


def teacher_vectors(teacher, snippets: Snippets, cache_dir: Path, batch_size: int = 32,
                    log: Callable[[str], None] = lambda m: None) -> np.ndarray:
    """The teacher's normalised vectors (s, d) of the (already viewed) snippets, cached in chunks of
    ``TEACHER_CHUNK`` under ``cache_dir`` keyed by the teacher's embedding fingerprint and the snippets."""
    from tqdm.auto import tqdm

    cache = ChunkedArrays(cache_dir, f"teacher-{cache_key(teacher.embedding_fingerprint(), snippets.key())}",
                          TEACHER_CHUNK)
    todo = cache.missing(len(snippets))
    if todo:
        log(f"teacher vectors: encoding {todo} of {len(cache.starts(len(snippets)))} chunks of {TEACHER_CHUNK} "
            f"snippets (cached in {cache_dir})")
    bar = tqdm(total=len(snippets), desc="teacher vectors", unit="snippet", disable=not todo)
    vectors, _ = cache.rows(len(snippets), lambda start, end: teacher.encode(
        snippets.codes[start:end], snippets.languages[start:end], batch_size=batch_size, view="raw",
        show_progress_bar=False), done=lambda start, end, _hit: bar.update(end - start))
    bar.close()
    return vectors


def length_batches(lengths: list[int], batch_size: int, max_batch_tokens: int, seed: int) -> list[list[int]]:
    """Indices in batches of similar token length (little padding): shuffled, sorted by length within
    pools of 50 batches, cut at ``batch_size`` snippets or ``max_batch_tokens`` padded tokens, the
    batches shuffled. Deterministic for a seed (a resumed epoch skips the batches it already did)."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    pool = 50 * batch_size
    batches: list[list[int]] = []
    for p in range(0, len(order), pool):
        chunk = sorted(order[p:p + pool], key=lambda i: lengths[i])
        cur: list[int] = []
        for i in chunk:
            longest = max([lengths[j] for j in cur] + [lengths[i]])
            if cur and (len(cur) >= batch_size or longest * (len(cur) + 1) > max_batch_tokens):
                batches.append(cur)
                cur = []
            cur.append(i)
        if cur:
            batches.append(cur)
    rng.shuffle(batches)
    return batches
