"""conba experiment cpu-training-data: the distillation mix (mined functions as units + a seeded contest sample)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    from conba_research.builders import cpu_training_data

    return cpu_training_data


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _mined(group: str, parts: dict[str, str], language: str = "python") -> list[dict]:
    return [{"id": f"{group}/{k}", "group": group, "language": language, "source": "mined", "code": v}
            for k, v in parts.items()]


def test_mined_units_put_the_doc_above_the_body_one_record_per_function(tmp_path):
    rows = (_mined("mined/python/a", {"doc": "# Adds two numbers.\n", "body": "def add(a, b):\n    return a + b\n",
                                      "renamed": "def f(x, y):\n    return x + y\n"})
            + _mined("mined/go/b", {"body": "func Id(x int) int { return x }\n"}, "go")
            + _mined("mined/go/c", {"doc": "// no body: skipped\n"}, "go"))
    units = [json.loads(line) for line in _script().mined_units(_write(tmp_path / "mined.jsonl", rows))]
    assert [u["id"] for u in units] == ["mined/python/a/unit", "mined/go/b/unit"]
    assert units[0]["code"] == "# Adds two numbers.\ndef add(a, b):\n    return a + b\n"
    assert units[1] == {"id": "mined/go/b/unit", "group": "mined/go/b", "language": "go", "source": "mined",
                        "code": "func Id(x int) int { return x }\n"}


def test_contest_sample_is_seeded_and_capped(tmp_path):
    for name, lang in (("atcoder_train.jsonl", "python"), ("mbxp_train.jsonl", "java")):
        _write(tmp_path / name, [{"id": f"{name[:5]}/{k}", "group": f"g{k}", "language": lang,
                                  "code": f"x = {k}\n"} for k in range(6)])
    sample = _script().contest_sample
    first, again, other = sample(tmp_path, 5, 0), sample(tmp_path, 5, 0), sample(tmp_path, 5, 1)
    assert first == again and first != other and len(first) == 5
    assert {json.loads(line)["id"] for line in sample(tmp_path, 100, 0)} == (
        {f"atcod/{k}" for k in range(6)} | {f"mbxp_/{k}" for k in range(6)})
