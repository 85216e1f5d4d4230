"""The data of an experiment run: fixed, seed-independent subsets written once into the work folder.

Every variant and every training seed sees exactly the same records: the training subset (at most
``cap`` snippets per (group, language), then about ``train_limit`` snippets of whole groups) and the
dev subsets (about ``dev_limit`` records of whole groups per dev file) are drawn with ``data_seed``
only. They are written as grouped JSONL named by a hash of their content, so a model trained on them
can always be traced back to its data, and the trainer's feature cache (keyed by content) is hit.
The first dev subset is used for early stopping; every dev subset is an evaluation set.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from conba.data import CodeRecord, cap_records, load_many, load_records, subset_groups
from conba.data.records import DataError
from conba.eval.pairs import require_clone_pairs
from conba.utils.io import write_text_atomic
from conba_research.config import ExperimentConfig


@dataclass
class EvalSet:
    name: str                 # e.g. "atcoder_dev"
    path: str                 # the written subset
    records: list[CodeRecord]
    source: str               # the original file

    @property
    def languages(self) -> list[str]:
        return sorted({r.language for r in self.records})


@dataclass
class Prepared:
    train_path: str
    train_records: list[CodeRecord]
    eval_sets: list[EvalSet] = field(default_factory=list)

    @property
    def select(self) -> EvalSet:
        """The early-stopping set (the first dev subset)."""
        return self.eval_sets[0]

    def describe(self) -> dict:
        def summary(recs: list[CodeRecord]) -> dict:
            return {"records": len(recs), "groups": len({r.group for r in recs}),
                    "languages": sorted({r.language for r in recs})}

        return {"train": {"file": self.train_path, **summary(self.train_records)},
                "eval": {s.name: {"file": s.path, "from": s.source, **summary(s.records)} for s in self.eval_sets}}


def write_subset(records: list[CodeRecord], folder: Path, stem: str) -> str:
    lines = [json.dumps({"id": r.id, "group": r.group, "language": r.language, "code": r.code,
                         "source": r.source}, ensure_ascii=False) for r in records]
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = folder / f"{stem}-{digest}.jsonl"
    if not path.exists():
        write_text_atomic(path, text)
    return str(path)


def prepare(cfg: ExperimentConfig, log=print) -> Prepared:
    """Draw and write the subsets of ``cfg`` into ``cfg.work/data`` (reused when already there)."""
    folder = Path(cfg.work) / "data"
    folder.mkdir(parents=True, exist_ok=True)
    train = cap_records(load_many(cfg.train), cfg.cap, cfg.data_seed)
    train = subset_groups(train, cfg.train_limit, cfg.data_seed)
    if len({r.group for r in train}) < 2:
        raise DataError("the training subset has fewer than 2 groups; raise --train-limit or --cap")
    prepared = Prepared(write_subset(train, folder, "train"), train)
    seen: set[str] = set()
    for path in cfg.dev:
        name = Path(path).stem
        while name in seen:
            name += "_"
        seen.add(name)
        recs = subset_groups(load_records(path), cfg.dev_limit, cfg.data_seed)
        if len({r.language for r in recs}) < 2:
            raise DataError(f"{path}: an evaluation set needs records in at least 2 languages")
        require_clone_pairs([r.group for r in recs], [r.language for r in recs], str(path))  # clone F1 needs them
        prepared.eval_sets.append(EvalSet(name, write_subset(recs, folder, name), recs, str(path)))
    log(f"data: train {len(train)} snippets ({len({r.group for r in train})} groups); "
        + ", ".join(f"{s.name} {len(s.records)}" for s in prepared.eval_sets))
    return prepared


def group_subset(records: list[CodeRecord], limit: int, seed: int = 0) -> list[CodeRecord]:
    """About ``limit`` records made of whole groups (all of them when limit is 0)."""
    return subset_groups(records, limit, seed)
