"""`conba eval`'s long-query breakdown: MAP@R over the snippets longer than one backbone window."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from conba.cli.main import cli
from conba.eval.long_inputs import long_mask, long_query_map
from conba.model import load_model

LONG_PY = "def f(a, b):\n" + "    a = a + b * 2 - 1\n" * 60 + "    return a\n"
LONG_JS = "function f(a, b) {\n" + "  a = a + b * 2 - 1;\n" * 60 + "  return a;\n}\n"


def test_long_query_map_scores_only_the_long_queries():
    groups, langs = ["a", "a", "b", "b"], ["py", "js", "py", "js"]
    sim = np.array([[1, 0.9, 0.1, 0.2], [0.9, 1, 0.3, 0.1], [0.1, 0.3, 1, 0.2], [0.2, 0.1, 0.2, 1]])
    # query 2 (py, group b): js candidates 1 (a, 0.3) then 3 (b, 0.2): its partner second
    got = long_query_map(sim, groups, langs, np.array([False, False, True, False]))
    assert got == {"map_at_r": 0.0, "queries": 1}
    got = long_query_map(sim, groups, langs, np.array([True, False, False, False]))
    assert got == {"map_at_r": 1.0, "queries": 1}
    assert np.isnan(long_query_map(sim, groups, langs, np.zeros(4, bool))["map_at_r"])


def test_long_mask_counts_windows_after_the_view(tiny_model):
    m = load_model(tiny_model)
    assert long_mask(m, [LONG_PY, "x = 1"], ["python", "python"]).tolist() == [True, False]
    assert long_mask(object(), ["x"], ["python"]) is None


def test_eval_reports_long_queries(tiny_model, tmp_path):
    rows = []
    for g in range(3):
        rows.append({"id": f"{g}/py", "group": str(g), "language": "python",
                     "code": LONG_PY.replace("2", str(g + 3))})
        rows.append({"id": f"{g}/js", "group": str(g), "language": "javascript",
                     "code": f"function g{g}(x) {{ return x * {g + 3}; }}"})
        rows.append({"id": f"{g}/js2", "group": str(g), "language": "javascript",
                     "code": LONG_JS.replace("2", str(g + 3))})
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    res = CliRunner().invoke(cli, ["eval", str(data), "-m", tiny_model, "--json", "--no-progress", "--no-tfidf"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["long"]["snippets"] == 6
    assert out["long"]["conba"]["queries"] == 6 and 0.0 <= out["long"]["conba"]["map_at_r"] <= 1.0
    plain = CliRunner().invoke(cli, ["eval", str(data), "-m", tiny_model, "--no-progress", "--no-tfidf"])
    assert plain.exit_code == 0 and "long queries (6 snippets" in plain.output
