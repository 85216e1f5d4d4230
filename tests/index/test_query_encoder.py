"""The ONNX query encoder (conba.engine.query_encoder): the torch engine's vectors without torch, cached by
the model folder's files, used by Index.search and conba compare, refused for models it cannot run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[2]
SHORT = ["def add(a, b):\n    return a + b\n", "int biggest(int[] xs) { return max(xs); }", "x"]
LONG = "def long_one(xs):\n" + "".join(f"    total = total + xs[{i}] * {i}\n" for i in range(60)) + "    return total\n"


@pytest.fixture(scope="module")
def windowed_model(tiny_backbone, tmp_path_factory) -> str:
    """A saved model that reads long snippets through windows and a trained-like linear window head."""
    import torch

    from conba.heads.window_head import WindowHeadConfig, build_window_head
    from conba.model import ConbaModel

    model = ConbaModel.create(str(tiny_backbone), max_length=32)
    head = build_window_head(WindowHeadConfig(reader="linear", dim=model.dim))
    with torch.no_grad():
        head.linear.weight.add_(0.05 * torch.randn_like(head.linear.weight))  # not the identity
    model.window_head, model.max_windows = head, 4
    return str(model.save(tmp_path_factory.mktemp("windowed")))


def _export(model, tmp_path):
    from conba.engine.query_encoder import QueryEncoder
    from conba.engine.query_export import export_query_encoder

    return QueryEncoder(export_query_encoder(model, tmp_path / "qe"))


def test_vectors_match_the_torch_engine_short_and_windowed(windowed_model, tmp_path):
    from conba.engine.windows import window_ids
    from conba.model import load_model

    model = load_model(windowed_model)
    enc = _export(model, tmp_path)
    codes, langs = [*SHORT, LONG], ["python", "java", "", "python"]
    assert len(window_ids(model.backbone, [LONG], 4).ids) > 1  # the long one really has windows
    assert window_ids(enc, codes, 4).ids == window_ids(model.backbone, codes, 4).ids  # tokenizers = transformers
    want = model.encode(codes, langs)
    got = enc.encode(codes, langs)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.abs(got - want).max() < 1e-5
    raw = enc.encode(LONG, "python", normalize=False)
    assert np.abs(raw - model.encode(LONG, "python", normalize=False)).max() < 1e-4
    assert enc.embedding_fingerprint() == model.embedding_fingerprint() and enc.dim == model.dim
    assert enc.view == model.view and enc.threshold == model.threshold and enc.max_windows == 4


def test_models_it_cannot_run_are_refused_with_the_reason(tiny_model, tmp_path):
    from conba.engine.query_export import NotExportable, export_query_encoder, exportable
    from conba.heads import HeadConfig
    from conba.model import ConbaModel, load_model

    assert exportable(load_model(tiny_model)) is None
    coded = ConbaModel.create(str(load_model(tiny_model).backbone.config.name_or_path), max_length=64,
                              head=HeadConfig(languages=["python", "java"], code_mode="prefix"))
    assert "language" in exportable(coded)
    with pytest.raises(NotExportable, match="control codes"):
        export_query_encoder(coded, tmp_path / "qe")
    assert not (tmp_path / "qe").exists()


@pytest.fixture()
def named_index(tiny_model, tmp_path):
    """An index built with the model by name (its own model, loaded to encode, then exported)."""
    from conba.index import Index
    from helpers import write_tree

    src = write_tree(tmp_path / "src", {"a.py": SHORT[0] + "\n\ndef mul(a, b):\n    return a * b\n",
                                        "b.java": "class B { int sub(int a, int b) { return a - b; } }\n"})
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([src])
    return tmp_path / "idx"


def test_index_search_uses_the_export_and_gives_the_torch_results(named_index, monkeypatch):
    from conba.engine.query_encoder import QueryEncoder
    from conba.index import Index
    from conba.index.model import query as query_model

    with Index(named_index) as idx:
        encoder = query_model.query_model(idx)
        assert isinstance(encoder, QueryEncoder) and idx.models.loaded is None  # no torch model was loaded
        fast = idx.search(SHORT[0], k=3)
    monkeypatch.setenv("CONBA_QUERY_ENGINE", "torch")
    with Index(named_index) as idx:
        slow = idx.search(SHORT[0], k=3)
        assert idx.models.loaded is not None and not isinstance(idx.models.loaded, QueryEncoder)
    assert [h.unit.id for h in fast] == [h.unit.id for h in slow]
    assert np.allclose([h.score for h in fast], [h.score for h in slow], atol=1e-4)


def test_a_changed_model_folder_is_not_served_by_the_old_export(named_index, tiny_model):
    import shutil

    from conba.index import Index
    from conba.index.errors import ModelMismatchError
    from conba.index.model import query as query_model
    from conba.model import load_model

    with Index(named_index) as idx:
        assert query_model.index_key(idx) is not None
        before = query_model.index_key(idx)
    model = load_model(tiny_model)
    model.threshold = 0.123  # not in the fingerprint: the vectors are the same, the files are not
    saved = model.save(Path(tiny_model).parent / "resaved")
    shutil.rmtree(tiny_model)
    shutil.copytree(saved, tiny_model)
    with Index(named_index) as idx:
        assert query_model.index_key(idx) != before  # another key: exported again from the new files
        idx.search(SHORT[1], k=1)
    import torch

    with torch.no_grad():  # changed weights: the index refuses the model, as without the export
        next(model.backbone.model.parameters()).add_(0.5)
    model.save(tiny_model + ".new")
    shutil.rmtree(tiny_model)
    shutil.copytree(tiny_model + ".new", tiny_model)
    with Index(named_index) as idx, pytest.raises(ModelMismatchError):
        idx.search(SHORT[1], k=1)


def test_compare_uses_the_export_once_it_is_made(tiny_model):
    from conba.clones.compare import compare
    from conba.engine.query_encoder import QueryEncoder
    from conba.index.model.query import model_for_queries

    first = model_for_queries(tiny_model)  # torch, exported on the way
    again = model_for_queries(tiny_model)
    assert not isinstance(first, QueryEncoder) and isinstance(again, QueryEncoder)
    a = compare(SHORT[0], SHORT[1], model=first, languages=("python", "java"))
    b = compare(SHORT[0], SHORT[1], model=again, languages=("python", "java"))
    assert abs(a.score - b.score) < 1e-5 and a.threshold == b.threshold


def test_the_engine_variable_is_checked(monkeypatch):
    from conba.engine.query_encoder import wanted
    from conba.errors import ConfigError

    monkeypatch.setenv("CONBA_QUERY_ENGINE", "torch")
    assert not wanted()
    monkeypatch.setenv("CONBA_QUERY_ENGINE", "gpu")
    with pytest.raises(ConfigError, match="CONBA_QUERY_ENGINE"):
        wanted()


@pytest.mark.slow
def test_search_and_an_up_to_date_index_run_without_torch(named_index, tmp_path):
    """The acceptance check of the issue: neither `conba search` nor `conba index` on an up-to-date index
    imports torch (or transformers, or scikit-learn) when the index's model is exported."""
    from conba.index import Index

    src = next(iter(named_index.parent.glob("src")))
    with Index(named_index) as idx:  # a run without -m records the model's stamp (conba.index.model.lazy)
        idx.add([src])
    code = ("import sys\nfrom conba.cli.main import cli\ntry:\n    cli(sys.argv[1:])\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\nprint(sorted(m for m in ('torch', 'transformers', 'sklearn') if m in "
            "sys.modules), file=sys.stderr)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for args in (["search", "--code", SHORT[0], "-i", str(named_index), "-k", "2"],
                 ["index", str(src), "-i", str(named_index)]):
        out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stderr.strip().splitlines()[-1] == "[]", (args[0], out.stderr[-2000:])
        assert out.stdout.strip()


@pytest.mark.slow
def test_polyglot_top10_with_the_default_model_is_the_torch_engines(tmp_path, monkeypatch):
    """The shipped default on examples/polyglot: every indexed function as a query (its language given), top 10
    through the ONNX query encoder vs the torch engine: the same ids in the same order, scores within 1e-4."""
    from conba.engine.query_encoder import QueryEncoder
    from conba.index import Index
    from conba.index.model import query as query_model

    with Index(tmp_path / "idx", model="default") as idx:
        idx.add([ROOT / "examples" / "polyglot"])  # loads default by name: exported at the end
    with Index(tmp_path / "idx") as idx:
        assert isinstance(query_model.query_model(idx), QueryEncoder)
        units = idx.units()
        fast = [idx.search(u.code, k=10, query_language=u.language) for u in units]
        assert idx.models.loaded is None
    monkeypatch.setenv("CONBA_QUERY_ENGINE", "torch")
    with Index(tmp_path / "idx") as idx:
        slow = [idx.search(u.code, k=10, query_language=u.language) for u in units]
    assert len(units) >= 40
    for f, s in zip(fast, slow):
        assert [h.unit.id for h in f] == [h.unit.id for h in s]
        assert max(abs(a.score - b.score) for a, b in zip(f, s)) < 1e-4


def test_a_failing_export_never_fails_the_index_run(tiny_model, tmp_path, monkeypatch):
    import conba.engine.query_export
    from conba.index import Index
    from helpers import write_tree

    def broken(model, directory):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(conba.engine.query_export, "export_query_encoder", broken)
    src = write_tree(tmp_path / "src", {"a.py": SHORT[0]})
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        report = idx.add([src])
    assert report.units_encoded == 1
    with Index(tmp_path / "idx") as idx:
        assert idx.search(SHORT[0], k=1)[0].unit.qualname == "add"  # torch, as before
