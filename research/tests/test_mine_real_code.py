"""conba experiment mine-real-code (conba_research.builders.mine_real_code): grouped JSONL and its manifest."""

from __future__ import annotations

import json

from conba.data import load_records
from helpers import write_tree
from helpers.mining import PY

GO = '''package stats

// Largest returns the largest of the values, or zero for none.
func Largest(xs []int) int {
	best := 0
	for _, x := range xs {
		if x > best {
			best = x
		}
	}
	return best
}
'''


def _script():
    from conba_research.builders import mine_real_code

    return mine_real_code


def test_script_writes_jsonl_and_manifest(tmp_path, capsys):
    write_tree(tmp_path / "src", {"pkg/a.py": PY, "g/s.go": GO})
    out = tmp_path / "out" / "mined.jsonl"
    assert _script().main([f"lib={tmp_path / 'src'}", "-o", str(out)]) == 0
    manifest = json.loads((out.parent / "manifest.json").read_text())
    assert manifest["per_language"] == {"go": 1, "python": 1}
    assert manifest["packages"]["python"] == {"lib/pkg": 1}
    assert "total" in capsys.readouterr().out
    assert load_records(out)


def test_script_reports_empty_tree(tmp_path, capsys):
    (tmp_path / "e").mkdir()
    assert _script().main([str(tmp_path / "e"), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "no source files" in capsys.readouterr().err
