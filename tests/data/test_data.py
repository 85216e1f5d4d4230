import json
import re

import pytest

from conba.data import DataError, detect_format, load_grouped, load_pairs, load_records, pairs_to_records


def write(tmp_path, lines, name="d.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return p


REC = {"id": "a", "group": "g1", "language": "python", "code": "print(1)"}


def test_grouped_roundtrip(tmp_path):
    p = write(tmp_path, [REC, {**REC, "id": "b", "language": "Java"}, "", {**REC, "id": "c", "group": 7}])
    recs = load_grouped(p)
    assert [r.language for r in recs] == ["python", "java", "python"]
    assert recs[2].group == "7"
    assert detect_format(p) == "grouped"


@pytest.mark.parametrize("line, message", [
    ("{not json", "d.jsonl:2: invalid JSON"),
    ('["a"]', "d.jsonl:2: expected a JSON object"),
    (json.dumps({k: v for k, v in REC.items() if k != "code"} | {"id": "z"}), "d.jsonl:2: missing field 'code'"),
    (json.dumps({**REC, "id": "z", "code": "   "}), "d.jsonl:2: field 'code' is empty"),
    (json.dumps({**REC, "id": "z", "language": 3}), "d.jsonl:2: field 'language' must be a string"),
    (json.dumps(REC), "d.jsonl:2: duplicate id 'a' (first on line 1)"),
])
def test_grouped_bad_lines_name_file_and_line(tmp_path, line, message):
    p = write(tmp_path, [REC, line])
    with pytest.raises(DataError) as err:
        load_grouped(p)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_utf8_and_missing_and_empty(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_bytes(json.dumps(REC).encode() + b"\n\xff\xfe\n")
    with pytest.raises(DataError, match="d.jsonl:2: not valid UTF-8"):
        load_grouped(p)
    with pytest.raises(DataError, match="file not found"):
        load_records(tmp_path / "nope.jsonl")
    with pytest.raises(DataError, match="empty"):
        load_records(write(tmp_path, [""], "e.jsonl"))
    with pytest.raises(DataError, match="is a directory"):
        load_records(tmp_path)
    bom = tmp_path / "bom.jsonl"  # a byte-order mark before the first line is no error
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(REC).encode() + b"\n")
    assert [r.id for r in load_records(bom)] == ["a"]


def test_unknown_language_reported_not_dropped(tmp_path):
    p = write(tmp_path, [REC, {**REC, "id": "b", "language": "cobol"}])
    with pytest.warns(UserWarning, match="unknown language.*cobol"):
        recs = load_grouped(p)
    assert len(recs) == 2
    with pytest.raises(DataError, match="cobol"):
        load_grouped(p, on_unknown="error")


PAIR = {"code": "class A {}", "language": "java",
        "positive": {"language_positive": "python", "code_positive": [{"code": "p1"}, {"code": "p2"}]},
        "negative": {"language_negative": "python", "code_negative": [{"code": "n1"}, {"code": "p2"}]}}


def test_pairs_format(tmp_path):
    p = write(tmp_path, [PAIR, {**PAIR, "code": "class B {}"}])
    assert detect_format(p) == "pairs"
    ex = load_pairs(p)
    assert ex[0].positives == [("python", "p1"), ("python", "p2")]
    recs = pairs_to_records(ex)
    by_code = {r.code: r.group for r in recs}
    assert by_code["class A {}"] == by_code["p1"] == by_code["p2"]  # anchor + positives
    assert by_code["n1"] not in (by_code["class A {}"], by_code["class B {}"])
    assert len([r for r in recs if r.code == "p2"]) == 1  # known negative joins its group, no duplicate
    assert len(load_records(p)) == len(recs)


def test_pairs_bad_input(tmp_path):
    bad = {**PAIR, "positive": {"language_positive": "python", "code_positive": []}}
    with pytest.raises(DataError, match="d.jsonl:1: 'code_positive' is empty"):
        load_pairs(write(tmp_path, [bad]))
    with pytest.raises(DataError, match="d.jsonl:1: missing or invalid 'positive'"):
        load_pairs(write(tmp_path, [{**PAIR, "positive": 3}]))
    with pytest.raises(DataError, match="neither grouped format"):
        load_records(write(tmp_path, [{"code": "x"}], "x.jsonl"))


def test_plain_snippet_lines_need_only_code(tmp_path):
    from conba.data import load_snippets

    plain = tmp_path / "snips.jsonl"
    plain.write_text('{"code": "def f(): pass", "language": "py"}\n\n{"id": 7, "code": "int g() {}"}\n')
    assert load_snippets(plain, "java") == [("snips/1", "python", "def f(): pass"), ("7", "java", "int g() {}")]
    with pytest.raises(DataError, match=r"snips.jsonl:3: missing field 'language' \(or name one .* -l LANG\)"):
        load_snippets(plain)
    grouped = tmp_path / "g.jsonl"
    grouped.write_text('{"id": "a", "group": "g", "language": "go", "code": "func f() {}"}\n')
    assert load_snippets(grouped) == [("a", "go", "func f() {}")]  # data files keep their own reader
    for body, message in [('{"language": "go"}', "g2.jsonl:1: missing field 'code'"),
                          ('{"code": "x", "language": "go", "id": true}', "g2.jsonl:1: field 'id' must be a string"),
                          ('{"code": "x", "language": "go", "id": 1}\n{"code": "y", "language": "go", "id": "1"}',
                           "g2.jsonl:2: duplicate id '1' (first on line 1)"), ("", "no records")]:
        (tmp_path / "g2.jsonl").write_text(body)
        with pytest.raises(DataError, match=re.escape(message)):
            load_snippets(tmp_path / "g2.jsonl")
