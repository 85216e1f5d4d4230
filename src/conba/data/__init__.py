"""Datasets: grouped JSONL records, the research pair format, and batch samplers."""

from conba.data.records import (
    LANGUAGES,
    CodeRecord,
    DataError,
    PairExample,
    detect_format,
    load_grouped,
    load_many,
    load_pairs,
    load_records,
    load_snippets,
    normalize_language,
    pairs_to_records,
)
from conba.data.subsets import cap_records, subset_groups

__all__ = [
    "LANGUAGES", "CodeRecord", "DataError", "PairExample", "detect_format", "load_grouped",
    "load_many", "load_pairs", "load_records", "load_snippets", "normalize_language", "pairs_to_records",
    "cap_records", "subset_groups",
]
