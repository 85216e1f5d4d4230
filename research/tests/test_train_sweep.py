"""conba experiment train-sweep (conba_research.train_sweep): the sweep files parse."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sweep_module():
    from conba_research import train_sweep

    return train_sweep


def test_sweep_file_parsing(tmp_path):
    mod = _sweep_module()
    f = tmp_path / "s.txt"
    f.write_text("# comment\nrun-a: {DATA}/t.jsonl --tune full  # trailing\n\nrun-b: {DATA}/t.jsonl -e 2\n")
    runs = mod.parse_sweep(f, "/d")
    assert runs == [("run-a", ["/d/t.jsonl", "--tune", "full"]), ("run-b", ["/d/t.jsonl", "-e", "2"])]
    f.write_text("no colon here\n")
    with pytest.raises(SystemExit, match="s.txt:1"):
        mod.parse_sweep(f, "/d")


def test_shipped_sweeps_parse():
    mod = _sweep_module()
    for f in sorted((ROOT / "scripts" / "sweeps").glob("*.txt")):
        runs = mod.parse_sweep(f, "/d")
        assert runs and all("--tune" in opts for _, opts in runs), f
