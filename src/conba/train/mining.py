"""Mine unlabelled real code into contrastive groups (CodeSearchNet style): function <-> its own doc.

Source folders are walked (no ``.gitignore``: the roots are package trees, not a repository), files
are cut into functions exactly as ``conba index`` cuts them (:func:`conba.source.extract.extract_units`),
and every function with a meaningful doc (:func:`mining_docs.meaningful_doc`), a body of at least
``min_body_lines`` code lines that is not trivial (:mod:`conba.clones.trivial`) becomes one group
``mined/<language>/<hash>`` of up to three members of the function's language:

``doc``      the doc text alone, as a comment (``# ...``, ``// ...``, ``/** ... */``);
``body``     the function without its doc comment / docstring;
``renamed``  the function (doc kept) with its declared identifiers renamed (:mod:`conba.augment`),
             else re-indented (:func:`mining_docs.reformat`); left out when neither changes it.

Functions are deduplicated across everything by a whitespace-free hash of the body, and docs per
language by their lower-cased text (one doc in two groups would make a false negative). Files are
visited round-robin over (language, package), so no package dominates; ``per_package`` and
``per_language`` cap the functions kept. Paths with a component of :data:`EXCLUDED` (held-out
evaluation code) are never read.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conba.augment import perturb
from conba.clones.trivial import body_lines, trivial_reason
from conba.data.records import LANGUAGES
from conba.errors import ConbaError
from conba.source.extract import extract_units
from conba.source.filters import DEFAULT_MAX_FILE_SIZE, Skip, is_excluded_dir, read_source
from conba.source.records import Unit
from conba.syntax.languages import detect_language
from conba.train.mining_docs import clean_doc, doc_comment, meaningful_doc, reformat, split_doc

# held-out evaluation code, matched on lower-cased path components (a file or folder name)
EXCLUDED: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx)) for name, rx in (
    ("antlr", r"antlr"),
    ("TheAlgorithms", r"thealgorithms"),
    ("keon/algorithms", r"algorithms(?:[-_.][\w.-]*)?"),  # the PyPI package `algorithms` (+ dist-info)
    ("javascript-algorithms", r".*javascript[-_]algorithms.*"),
    ("williamfiset/Algorithms", r".*williamfiset.*"),
    ("diff-match-patch", r".*diff[-_]?match[-_]?patch.*"),
    ("commonmark", r".*commonmark.*"),
))
_DECLARATIONS = re.compile(r"\.d\.[mc]?ts$")  # TypeScript declaration files: no bodies
_CPP_HINT = re.compile(r"^\s*(?:namespace\s+\w|template\s*<|class\s+\w+[^;]*\{|using\s+namespace)|\w::\w", re.M)
_FULL = {"keon/algorithms", "javascript-algorithms", "williamfiset/Algorithms", "diff-match-patch", "commonmark"}


class MiningError(ConbaError, ValueError):
    """Bad input to the miner (a missing root, nothing to mine). The message is one line."""


def excluded_by(path: str | os.PathLike) -> str | None:
    """The name of the exclusion that a component of ``path`` matches, else None."""
    for part in Path(path).parts:
        low = part.lower()
        for name, rx in EXCLUDED:
            if (rx.fullmatch(low) if name in _FULL else rx.search(low)):
                return name
    return None


@dataclass(frozen=True)
class SourceFile:
    path: str
    language: str
    package: str  # "<root label>/<first folder under the root>"


@dataclass
class MineStats:
    files_seen: int = 0
    files_read: int = 0
    functions: int = 0
    kept: Counter = field(default_factory=Counter)           # language -> groups
    packages: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # lang -> pkg -> n
    rejected: Counter = field(default_factory=Counter)       # reason -> functions
    skipped: Counter = field(default_factory=Counter)        # reason -> files
    excluded: Counter = field(default_factory=Counter)       # exclusion -> paths pruned
    renamed: Counter = field(default_factory=Counter)        # renamed | reformatted | none


def package_of(rel: Path, label: str) -> str:
    parts = rel.parts
    if len(parts) == 1:
        return f"{label}/{rel.stem}"
    head = "/".join(parts[:2]) if parts[0].startswith("@") and len(parts) > 2 else parts[0]
    return f"{label}/{head}"


def find_sources(roots: Iterable[str], languages: Iterable[str], stats: MineStats) -> list[SourceFile]:
    """Source files of ``languages`` under ``roots`` (``PATH`` or ``LABEL=PATH``), minus excluded,
    vendored and hidden folders."""
    wanted = set(languages)
    out: list[SourceFile] = []
    for spec in roots:
        label, _, raw = spec.rpartition("=") if "=" in spec else ("", "", spec)
        root = Path(raw)
        if not root.is_dir():
            raise MiningError(f"{raw}: no such directory")
        label = label or root.name
        for dirpath, dirnames, filenames in os.walk(root):
            kept = []
            for d in sorted(dirnames):
                hit = excluded_by(d)
                if hit:
                    stats.excluded[hit] += 1
                elif not is_excluded_dir(Path(dirpath, d)):
                    kept.append(d)
            dirnames[:] = kept
            for name in sorted(filenames):
                lang = detect_language(name)
                if lang not in wanted or name.startswith(".") or _DECLARATIONS.search(name):
                    continue
                hit = excluded_by(name)
                if hit:
                    stats.excluded[hit] += 1
                    continue
                path = Path(dirpath, name)
                out.append(SourceFile(str(path), lang, package_of(path.relative_to(root), label)))
    stats.files_seen = len(out)
    return out


def header_language(path: str, text: str, language: str) -> str:
    """``cpp`` for a ``.h`` header written in C++ (namespaces, templates, classes, ``::``), else
    ``language``: the extension alone calls every ``.h`` C."""
    return "cpp" if language == "c" and path.endswith(".h") and _CPP_HINT.search(text) else language


def without_rust_attributes(body: str) -> str:
    """``body`` without the ``#[...]`` attribute lines that open it: the extractor keeps the attributes
    between a Rust doc and its ``fn`` in the unit, and a mined body starts at the ``fn`` (as the unit of
    a function without a doc does)."""
    lines = body.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].strip().startswith("#[") and lines[i].strip().endswith("]"):
        i += 1
    return "".join(lines[i:]) if i < len(lines) else body


def norm_hash(code: str) -> str:
    """Whitespace-insensitive identity of a body."""
    return hashlib.sha256("".join(code.split()).encode("utf-8")).hexdigest()[:16]


def rename_code(code: str, language: str, seed: int = 0) -> str | None:
    """``code`` with all its renameable names renamed (:mod:`conba.augment`), None when none could be.
    A PHP function is renamed behind an opening ``<?php`` tag (else the grammar reads it as HTML)."""
    tag = "<?php\n" if language == "php" and not code.lstrip().startswith("<?php") else ""
    res = perturb(tag + code, language, "synonym", 1.0, seed=seed)
    return res.code[len(tag):] if res.status == "ok" and res.code.startswith(tag) else None


@dataclass
class Miner:
    per_package: int = 150
    per_language: int = 1500
    max_chars: int = 4000
    min_body_lines: int = 3
    min_doc_words: int = 3
    seed: int = 0
    stats: MineStats = field(default_factory=MineStats)
    _bodies: set[str] = field(default_factory=set)
    _docs: set[tuple[str, str]] = field(default_factory=set)

    def group(self, unit: Unit) -> list[dict] | None:
        """The records of one function, or None (the reason is counted in ``stats.rejected``)."""
        lang, reject = unit.language, self.stats.rejected
        if unit.kind != "function":
            return None
        if len(unit.code) > self.max_chars:
            reject["too long"] += 1
            return None
        split = split_doc(unit.code, lang)
        if split is None:
            reject["no doc"] += 1
            return None
        doc = clean_doc(split[0])
        body = split[1].rstrip() + "\n"
        if lang == "rust":
            body = without_rust_attributes(body)
        if not meaningful_doc(doc, self.min_doc_words):
            reject["doc not meaningful"] += 1
            return None
        bare = Unit(unit.file, unit.qualname, lang, unit.start_line, unit.end_line, body)
        if trivial_reason(bare) or len(body_lines(body, lang)) < self.min_body_lines:
            reject["trivial or short body"] += 1
            return None
        key, doc_key = norm_hash(body), (lang, " ".join(doc.lower().split()))
        if key in self._bodies or doc_key in self._docs:
            reject["duplicate"] += 1
            return None
        self._bodies.add(key)
        self._docs.add(doc_key)
        gid = f"mined/{lang}/{key}"
        rows = [self._row(gid, "doc", lang, doc_comment(doc, lang)), self._row(gid, "body", lang, body)]
        renamed = rename_code(unit.code, lang, self.seed)
        if renamed is not None:
            rows.append(self._row(gid, "renamed", lang, renamed))
            self.stats.renamed["renamed"] += 1
        elif (alt := reformat(unit.code, lang)) is not None:
            rows.append(self._row(gid, "renamed", lang, alt))
            self.stats.renamed["reformatted"] += 1
        else:
            self.stats.renamed["none"] += 1
        return rows

    @staticmethod
    def _row(gid: str, member: str, lang: str, code: str) -> dict:
        return {"id": f"{gid}/{member}", "group": gid, "language": lang, "source": "mined", "code": code}

    def mine(self, files: list[SourceFile], progress: Callable[[int], None] | None = None) -> list[dict]:
        """Records of ``files``, visited round-robin over (language, package) in a seeded order."""
        if not files:
            raise MiningError("no source files of the requested languages under the given roots")
        rng = random.Random(self.seed)
        queues: dict[tuple[str, str], list[SourceFile]] = defaultdict(list)
        for f in files:
            queues[(f.language, f.package)].append(f)
        for q in queues.values():
            rng.shuffle(q)
        active = sorted(queues)
        rng.shuffle(active)
        out: list[dict] = []
        while active:
            for key in list(active):
                lang, pkg = key
                if self.stats.kept[lang] >= self.per_language or not queues[key] or \
                        self.stats.packages[lang][pkg] >= self.per_package:
                    active.remove(key)
                    continue
                out += self._mine_file(queues[key].pop(), progress)
        return out

    def _mine_file(self, f: SourceFile, progress: Callable[[int], None] | None) -> list[dict]:
        try:
            text = read_source(f.path, DEFAULT_MAX_FILE_SIZE)
        except Skip as exc:
            self.stats.skipped[exc.reason] += 1
            return []
        self.stats.files_read += 1
        lang = header_language(f.path, text, f.language)
        out: list[dict] = []
        for unit in extract_units(f.path, text, lang):
            if self.stats.kept[lang] >= self.per_language or self.stats.packages[lang][f.package] >= self.per_package:
                break
            self.stats.functions += 1
            rows = self.group(unit)
            if rows:
                out += rows
                self.stats.kept[lang] += 1
                self.stats.packages[lang][f.package] += 1
                if progress:
                    progress(1)
        return out


def mine_roots(roots: list[str], languages: Iterable[str] = LANGUAGES, miner: Miner | None = None,
               progress: Callable[[int], None] | None = None) -> tuple[list[dict], MineStats]:
    """Find and mine the sources under ``roots``; returns (records, stats)."""
    miner = miner or Miner()
    files = find_sources(roots, languages, miner.stats)
    return miner.mine(files, progress), miner.stats
