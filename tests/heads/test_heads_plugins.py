"""Head kinds other distributions plug in through the ``conba.heads`` entry points (conba.utils.head_kinds):
the product's kinds need no metadata; a saved model of a research kind without the research suite fails in
one line naming the kind and ``pip install -e research/``, and loads to the same vectors with it; the kinds
research/pyproject.toml declares resolve to Head subclasses; a product kind cannot be replaced."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import click
import numpy as np
import pytest

import conba.utils.head_kinds as head_kinds
from conba.errors import ConfigError
from conba.heads import Head, HeadConfig, LinearHead, PoolingHead, build_head, head_class, load_head
from conba.utils.head_kinds import ENTRY_POINT_GROUP
from helpers import research_entry_points

INSTALL = "pip install -e research/"
SHIPPED = Path(__file__).resolve().parents[2] / "src" / "conba"


class NotAHead:
    """An entry point's object that is no Head."""


def _points(**named: str) -> tuple[importlib.metadata.EntryPoint, ...]:
    return tuple(importlib.metadata.EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in named.items())


@pytest.fixture()
def no_research(monkeypatch):
    """As if the research suite were not installed: no ``conba.heads`` entry points."""
    monkeypatch.setattr(head_kinds, "entry_points", lambda: ())


def test_the_product_kinds_need_no_installed_metadata(no_research) -> None:
    assert head_kinds.head_kinds() == ("linear", "none") and HeadConfig().kind == "linear"
    assert isinstance(build_head(HeadConfig(dim=8)), LinearHead)
    assert isinstance(build_head({"kind": "none", "dim": 8}), PoolingHead)


@pytest.mark.parametrize("kind", ["conba", "conba-scan"])
def test_a_research_kind_without_the_research_suite_is_one_line(no_research, kind: str) -> None:
    for make in (lambda: HeadConfig(kind=kind), lambda: build_head({"kind": kind, "dim": 8})):
        with pytest.raises(ConfigError, match=rf"^head kind '{kind}' is not installed \(.*: {INSTALL}; "
                                              r"installed: linear, none\)$") as err:
            make()
        assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="HeadConfig.kind must be one of"):
        HeadConfig(kind="mamba")


def test_an_old_conba_model_loads_only_with_the_research_suite(tiny_backbone, tmp_path, monkeypatch) -> None:
    pytest.importorskip("conba_research")
    from conba.model import ConbaModel

    model = ConbaModel.create(str(tiny_backbone), HeadConfig(kind="conba", mode="tokens", languages=["python"]),
                              max_length=64)
    folder = model.save(tmp_path / "old")
    codes, langs = ["def add(a, b):\n    return a + b\n", "int add(int a, int b) { return a + b; }"], ["python", "java"]
    before = model.encode(codes, languages=langs)
    with monkeypatch.context() as m:
        m.setattr(head_kinds, "entry_points", lambda: ())
        with pytest.raises(ConfigError, match=rf"^head kind 'conba' is not installed .*{INSTALL}; .*\) in "
                                              r".*head_config.json$") as err:
            ConbaModel.load(folder)
        assert "\n" not in str(err.value) and "head_config.json" in str(err.value)
    loaded = ConbaModel.load(folder)
    assert type(loaded.head).__module__ == "conba_research.heads.seed_layer"
    np.testing.assert_array_equal(loaded.encode(codes, languages=langs), before)
    assert loaded.fingerprint() == model.fingerprint()


def test_the_kinds_research_pyproject_declares_are_head_classes() -> None:
    declared = {point.name: point for point in research_entry_points(ENTRY_POINT_GROUP)}
    assert set(declared) == {"conba", "conba-scan"} == set(head_kinds.RESEARCH_KINDS)
    pytest.importorskip("conba_research")
    for name, point in declared.items():
        cls = point.load()
        assert issubclass(cls, Head) and cls is head_class(name)
        assert build_head(HeadConfig(kind=name, dim=8)).config.kind == name


def test_a_plug_in_cannot_replace_a_product_kind_and_must_be_a_head(monkeypatch) -> None:
    monkeypatch.setattr(head_kinds, "entry_points", lambda: _points(
        linear=f"{__name__}:NotAHead", odd=f"{__name__}:NotAHead"))
    assert head_kinds.head_kinds() == ("linear", "none", "odd")
    assert head_class("linear") is LinearHead
    with pytest.raises(ConfigError, match=r"^entry point odd = .*NotAHead \(group conba.heads\) is not a "):
        build_head({"kind": "odd", "dim": 8})


@pytest.mark.parametrize("shipped", ["default_model", "default_fast"])
def test_shipped_head_configs_with_the_old_conba_fields_load_unchanged(no_research, shipped: str) -> None:
    folder = SHIPPED / shipped / "head"
    saved = json.loads((folder / "head_config.json").read_text(encoding="utf-8"))
    assert saved["kind"] == "none" and "state_dim" in saved and "use_control" in saved
    head = load_head(folder)
    assert isinstance(head, PoolingHead) and head.config.to_dict() == saved
    # what the model fingerprint (conba_config.json) hashes: unchanged by the kinds' move
    assert head.config.fingerprint_dict() == {k: v for k, v in saved.items() if k not in ("use_state", "code_mode")}


def test_train_refuses_a_research_head_without_the_suite_in_one_line(no_research) -> None:
    from conba.cli.train_cmd import HeadKind
    from conba.train.config import TrainConfig

    with pytest.raises(ConfigError, match="head kind 'conba' is not installed"):
        TrainConfig(train=["x.jsonl"], head="conba").validate()
    with pytest.raises(click.BadParameter, match="pip install -e research/"):
        HeadKind().convert("conba-scan", None, None)
    assert HeadKind().convert("none", None, None) == "none"
