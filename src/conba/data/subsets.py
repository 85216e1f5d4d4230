"""Seeded subsets of grouped records: whole groups up to a size, and a cap per (group, language)."""

from __future__ import annotations

import random
from collections import defaultdict

from conba.data.records import CodeRecord


def cap_records(records: list[CodeRecord], cap: int, seed: int) -> list[CodeRecord]:
    if cap <= 0:
        return records
    by_key: dict[tuple[str, str], list[CodeRecord]] = defaultdict(list)
    for r in records:
        by_key[(r.group, r.language)].append(r)
    rng = random.Random(seed)
    keep: set[int] = set()
    for items in by_key.values():
        keep.update(id(r) for r in rng.sample(items, min(cap, len(items))))
    return [r for r in records if id(r) in keep]


def subset_groups(records: list[CodeRecord], limit: int, seed: int) -> list[CodeRecord]:
    """About ``limit`` records made of whole groups (so retrieval stays meaningful)."""
    if limit <= 0 or limit >= len(records):
        return records
    groups = sorted({r.group for r in records})
    random.Random(seed).shuffle(groups)
    chosen, count = set(), 0
    size: defaultdict[str, int] = defaultdict(int)
    for r in records:
        size[r.group] += 1
    for g in groups:
        if count >= limit:
            break
        chosen.add(g)
        count += size[g]
    return [r for r in records if r.group in chosen]
