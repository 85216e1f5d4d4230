"""Function-level ``conba eval-repo`` (the ports_dev protocol): groups of functions, projects, name-blind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.eval.test_eval_repo import KeywordModel

from conba.cli.main import cli
from conba.data.records import DataError
from conba.eval.repo import evaluate_repo
from conba.eval.repo_functions import blind_name, is_function_groups, load_function_groups, name_key
from conba.source.records import Unit
from helpers import write_tree

# Two projects. In "lib" the Python and JavaScript functions are ports of each other (same names,
# same keyword in the body); "app" holds one grouped pair and an ungrouped distractor.
FILES = {
    "lib/py/text.py": "def parse_header(line):\n    value = line.strip()\n    return 'ALPHA' + value\n\n"
                      "def render_body(line):\n    value = line.strip()\n    return 'BETA' + value\n",
    "lib/js/text.js": "function parseHeader(line) {\n  const value = line.trim();\n  return 'ALPHA' + value;\n}\n\n"
                      "function renderBody(line) {\n  const value = line.trim();\n  return 'BETA' + value;\n}\n",
    "app/py/m.py": "def total_cost(items):\n    value = sum(items)\n    return 'GAMMA' + str(value)\n",
    "app/js/m.js": "function totalCost(items) {\n  const value = items.length;\n  return 'GAMMA' + value;\n}\n\n"
                   "function unrelated(items) {\n  const value = items.length;\n  return 'DELTA' + value;\n}\n",
}


def _member(lang: str, file: str, name: str, line: int) -> dict:
    return {"language": lang, "file": file, "name": name, "line": line}


GROUPS = [
    {"group": "lib/parseheader", "members": [_member("python", "lib/py/text.py", "parse_header", 1),
                                             _member("javascript", "lib/js/text.js", "parseHeader", 1)]},
    {"group": "lib/renderbody", "members": [_member("python", "lib/py/text.py", "render_body", 5),
                                            _member("javascript", "lib/js/text.js", "renderBody", 6)]},
    {"group": "app/totalcost", "members": [_member("python", "app/py/m.py", "total_cost", 1),
                                           _member("javascript", "app/js/m.js", "totalCost", 1),
                                           _member("javascript", "app/js/m.js", "gone", 99)]},
]


@pytest.fixture()
def ports(tmp_path) -> tuple[Path, Path]:
    root = write_tree(tmp_path / "ports", FILES)
    groups = root / "groups.jsonl"
    groups.write_text("".join(json.dumps(g) + "\n" for g in GROUPS))
    return root, groups


def test_groups_file_is_read_and_checked(ports, tmp_path):
    root, groups = ports
    assert is_function_groups(groups)
    fg = load_function_groups(groups)
    assert len(fg.members) == 7 and fg.project_of(str(root / "lib" / "js" / "text.js")) == "lib"
    assert fg.project_of("/elsewhere/x.py") is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"group": "g", "members": [{"language": "python", "file": "a.py", "name": "f"}]}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: members\[0\].line must be a int"):
        load_function_groups(bad)
    bad.write_text(json.dumps({"group": "g", "members": []}) + "\n")
    with pytest.raises(DataError, match="bad.jsonl:1: field 'members'"):
        load_function_groups(bad)


def test_blind_name_replaces_only_the_own_name():
    unit = Unit("a.py", "Parser.parse_header", "python", 1, 3,
                "def parse_header(x):\n    return parse_header_inner(x) + parse_header(x[1:])\n")
    assert blind_name(unit) == "def f(x):\n    return parse_header_inner(x) + f(x[1:])\n"


def test_function_level_scores_per_project_pair(ports, tmp_path):
    root, groups = ports
    res = evaluate_repo([root / "lib", root / "app"], groups, model=KeywordModel(), index_dir=tmp_path / "idx",
                        baselines=("tfidf",), baseline_model=KeywordModel(), lexical_weight=0.0)
    assert res["level"] == "function" and res["methods"] == ["conba", "tfidf"]
    pairs = res["retrieval"]["conba"]["pairs"]
    assert set(pairs) == {"lib:python->javascript", "lib:javascript->python", "app:python->javascript",
                          "app:javascript->python"}
    assert all(p["map_at_r"] == 1.0 for p in pairs.values())  # the keyword decides, names do not matter
    assert pairs["app:python->javascript"]["candidates"] == 2  # every JS function of the project, grouped or not
    assert res["counts"]["members_found"] == 6 and [m["name"] for m in res["missing"]] == ["gone"]
    assert res["blind"]["conba"]["mean"]["map_at_r"] == 1.0


def test_name_blind_takes_the_names_away_from_the_lexical_channel(tmp_path):
    bodies = {"lib/py/a.py": "def parse_header(line):\n    return line.strip()\n\n"
                             "def render_body(line):\n    return line.strip()\n",
              "lib/js/a.js": "function parseHeader(line) {\n  return line.strip();\n}\n\n"
                             "function renderBody(line) {\n  return line.strip();\n}\n"}
    root = write_tree(tmp_path / "same", bodies)
    groups = root / "groups.jsonl"
    groups.write_text("".join(json.dumps(g) + "\n" for g in [
        {"group": "h", "members": [_member("python", "lib/py/a.py", "parse_header", 1),
                                   _member("javascript", "lib/js/a.js", "parseHeader", 1)]},
        {"group": "b", "members": [_member("python", "lib/py/a.py", "render_body", 4),
                                   _member("javascript", "lib/js/a.js", "renderBody", 5)]}]))
    res = evaluate_repo([root / "lib"], groups, model=KeywordModel(), index_dir=tmp_path / "idx",
                        baselines=(), lexical_weight=1.0)
    assert res["methods"] == ["conba", "dense"] and res["model"]["lexical_weight"] == 1.0
    plain = res["retrieval"]["conba"]["pairs"]["lib:python->javascript"]["map_at_r"]
    blind = res["blind"]["conba"]["pairs"]["lib:python->javascript"]["map_at_r"]
    assert plain == 1.0 and blind < plain  # without its name a body's words match both functions


def test_cli_function_level_table(ports, tmp_path, tiny_model):
    root, groups = ports
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["eval-repo", str(root / "lib"), str(root / "app"), "-g", str(groups),
                                   "-i", str(tmp_path / "idx"), "-m", tiny_model, "--baselines", "tfidf",
                                   "--lexical-weight", "0.3", "--plain", "-j", str(out)])
    assert res.exit_code == 0, res.output
    assert "Function-level cross-language retrieval" in res.stdout and "Name-blind" in res.stdout
    assert "lib:python->javascript" in res.stdout and "lexical weight 0.3" in res.stdout
    saved = json.loads(out.read_text())
    assert set(saved["retrieval"]) == {"conba", "dense", "tfidf"} and set(saved["blind"]) == {"conba", "dense", "tfidf"}


@pytest.mark.parametrize(("qualname", "key"), [
    ("diff_match_patch.diff_main", "diffmain"),
    ("DiffMatchPatch.DiffMain", "diffmain"),
    ("dmp::diff_halfMatchI", "diffhalfmatchi"),
    ("Parser#parse_header", "parseheader"),
    ("diff_main", "diffmain"),
])
def test_name_key_is_the_readme_rule(qualname, key):
    assert name_key(qualname) == key
