"""Constructors (conba.mapping.kinds): which functions are constructors, the constructor-to-constructor rule of
``conba map``, and the name-key truth leaving constructors ungraded."""

from __future__ import annotations

import json

import numpy as np

from conba.mapping.config import MapConfig
from conba.mapping.kinds import constructor_mask, kind_mismatch, sets_fields_only
from conba.mapping.name_truth import unported
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.records import Unit
from helpers import ScoreStubIndex, map_config


def u(name: str, lang: str, start: int = 1, end: int = 3, uid: int | None = None, file: str = "",
      code: str = "x") -> Unit:
    return Unit(file or f"/p/{lang}/a", name, lang, start, end, code, id=uid)


def test_constructors_by_name_by_capital_and_by_prototype_methods():
    units = [u("Diff.<init>", "java"), u("patch_obj.__init__", "python"), u("__init__", "rust"),
             u("Parser", "javascript", code="function Parser(o) {\n  return {doc: null};\n}"),
             u("Foo.constructor", "typescript"),
             # a JavaScript function that is the receiver of methods defined outside its lines
             u("diff_match_patch", "javascript", 1, 30), u("diff_match_patch.diff_main", "javascript", 40, 90),
             # ... but not one whose only members are helpers nested inside it
             u("parseInlines", "javascript", 100, 140), u("parseInlines.trim", "javascript", 110, 115),
             u("diff_main", "python"), u("Command.init", "rust"), u("new", "rust")]
    assert constructor_mask(units).tolist() == [True, True, False, True, True, True, False, False, False, False,
                                                False, False]
    # methods in another file do not make a function a constructor
    other = [u("helper", "javascript", 1, 5), u("helper.x", "javascript", 10, 12, file="/p/javascript/b")]
    assert constructor_mask(other).tolist() == [False, False]
    # a capitalised function that returns a value (its JSDoc's "@return {number}" is no object literal), and a
    # C++ function named like its namespace (the extractor calls it <init>) with a return type, are not
    values = [u("IsPowerOfTwo", "javascript", code="/** @return {boolean} */\nconst IsPowerOfTwo = (n) => n > 0"),
              u("Node", "javascript", code="var Node = function(t) {\n  this._type = t;\n}"),
              u("diff_match_patch.Diff", "javascript", code="function(op, text) {\n  this[0] = op;\n}"),
              u("hamming_distance.<init>", "cpp", code="// doc\nint hamming_distance(int a) {\n  return a;\n}"),
              u("Patch.<init>", "cpp", code="/** doc */\nPatch::Patch() : start1(0) {\n}"),
              u("Bits<T>.<init>", "cpp", code="template <typename T>\nexplicit Bits<T>(T v) {}")]
    assert constructor_mask(values).tolist() == [False, True, True, False, True, True]


def test_kind_mismatch_only_between_languages_with_constructors():
    src = [u("Patch.isNull", "cpp"), u("Patch.<init>", "cpp", code="Patch::Patch() {}"), u("InitCommand", "c")]
    tgt = [u("patch_obj", "javascript", 1, 10), u("patch_obj.toString", "javascript", 20, 30),
           u("Command.new", "rust")]
    assert kind_mismatch(src, tgt).tolist() == [[True, False, False], [False, True, False],
                                                [False, False, False]]


def test_a_constructor_that_computes_may_port_to_a_function():
    sieve = u("SieveOfEratosthenes.<init>", "csharp",
              code="public SieveOfEratosthenes(int n) {\n  for (var i = 2; i < n; i++) { mark(i); }\n}")
    plain = u("Point.<init>", "csharp", code="public Point(int x) {\n  this.x = x; // if only\n}")
    assert sets_fields_only(plain) and not sets_fields_only(sieve)
    assert kind_mismatch([sieve, plain], [u("sieveOfEratosthenes", "javascript")]).tolist() == [[False], [True]]


def test_a_constructor_is_not_assigned_a_method_in_a_map():
    from conba.mapping import map_units

    body = "x {\n  a = 1;\n  b = 2;\n  return a + b;\n}\n"
    source = [Unit("/s/cpp/a.cpp", "Patch.isNull", "cpp", 1, 5, body, id=0),
              Unit("/s/cpp/a.cpp", "Patch.diffs", "cpp", 7, 11, body.replace("2", "3"), id=1)]
    target = [Unit("/t/javascript/a.js", "patch_obj", "javascript", 1, 5, body, id=10),
              Unit("/t/javascript/a.js", "patch_obj.toString", "javascript", 7, 11, body.replace("2", "4"), id=11)]
    scores = np.array([[0.70, 0.30], [0.20, 0.75]], dtype=np.float32)
    cfg = dict(relax=0, contrast=0, name_bonus=0, align=False)
    off = map_units(ScoreStubIndex(scores), source, target, MapConfig(constructor_penalty=0, **cfg))
    on = map_units(ScoreStubIndex(scores), source, target, MapConfig(**cfg))
    assert off.functions[0].status == "matched" and off.functions[0].target.qualname == "patch_obj"
    assert on.functions[0].status == "missing" and on.functions[1].status == "matched"
    assert on.functions[0].nearest[0][0].qualname == "patch_obj"  # still listed for the reader, own score
    assert on.functions[0].nearest[0][1] == np.float32(0.70)


def test_the_truth_leaves_a_javascript_constructor_function_ungraded():
    src = [u("diff_match_patch", "javascript", 1, 30, uid=1), u("diff_match_patch.diff_main", "javascript", 40, 90,
                                                                 uid=2),
           u("diff_match_patch.gone", "javascript", 100, 110, uid=3)]
    tgt = [u("diff_match_patch.__init__", "python", uid=10), u("diff_main", "python", uid=11)]
    port = PortMap([FunctionMatch(s, "matched", tgt[0], 0.9) for s in src], [], 0.6, 0.02, 2, targets=tgt)
    assert unported(port) == {2: False, 3: True}


def test_cli_constructor_penalty(tiny_model, tmp_path):
    from click.testing import CliRunner

    from conba.cli.main import cli

    src, tgt = tmp_path / "js", tmp_path / "py"
    src.mkdir()
    tgt.mkdir()
    (src / "p.js").write_text("function Point(x, y) {\n  this.x = x;\n  this.y = y;\n}\n")
    (tgt / "p.py").write_text("def make_point(x, y):\n    p = {}\n    p['x'] = x\n    p['y'] = y\n    return p\n")
    base = ["map", str(src), str(tgt), "-i", str(tmp_path / "idx"), "-m", tiny_model, "-t", "0"]
    keys = {"relax": 0, "contrast": 0, "name_bonus": 0, "align": False}

    def status(*extra: str) -> str:
        result = CliRunner().invoke(cli, base + list(extra))
        assert result.exit_code == 0, result.output
        return next(r for r in map(json.loads, result.stdout.splitlines()) if r.get("type") == "function")["status"]

    assert status("--config", map_config(tmp_path, **keys, constructor_penalty=0)) == "matched"
    assert status("--config", map_config(tmp_path, **keys)) == "missing"  # default 1: a constructor that sets
    # fields is no function's port
    bad = CliRunner().invoke(cli, base + ["--config", map_config(tmp_path, **keys, constructor_penalty=3)])
    assert bad.exit_code == 1 and "constructor_penalty must be in [0, 2], got 3" in bad.output
