"""The name key of the missing-list truth (conba.mapping.name_truth): literal and folded, on ports_dev's cases."""

from __future__ import annotations

from conba.mapping.name_truth import graded, literal_key, truth_keys, unported
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.records import Unit


def test_literal_key_is_the_last_component_without_case_or_underscores():
    assert literal_key("Dmp.diff_main") == literal_key("diffMain") == literal_key("DiffMain") == "diffmain"
    assert truth_keys("Dmp.diff_main") == {"diffmain"}


def test_folded_keys_meet_across_receivers_and_dropped_namespaces():
    assert truth_keys("ZopfliCostModelSetFromCommands", True) & truth_keys(
        "ZopfliCostModel<A>.set_from_commands", True)
    assert truth_keys("InitCommand", True) & truth_keys("Command.init", True)
    assert truth_keys("BrotliStoreMetaBlock", True) & truth_keys("store_meta_block", True)
    assert not truth_keys("BrotliStoreMetaBlock") & truth_keys("store_meta_block")
    assert not truth_keys("StoreBlock", True) & truth_keys("block", True)  # one word left: no dropping


def test_unported_by_each_rule_and_generic_csharp_names_ungraded():
    def unit(uid: int, name: str, lang: str) -> Unit:
        return Unit(f"/p/{lang}/a", name, lang, uid, uid + 2, "x", id=uid)

    targets = [unit(10, "store_meta_block", "rust"), unit(11, "Command.init", "rust")]
    rows = [FunctionMatch(unit(i, n, "c"), "missing", None, None)
            for i, n in [(1, "BrotliStoreMetaBlock"), (2, "InitCommand"), (3, "BrotliGone")]]
    port = PortMap(rows, [], 0.6, 0.02, 2, targets=targets)
    assert unported(port) == {1: True, 2: True, 3: True}
    assert unported(port, folded=True) == {1: False, 2: False, 3: True}
    assert not graded(unit(4, "Diff.GetHashCode", "csharp")) and graded(unit(5, "Diff.GetLength", "csharp"))
