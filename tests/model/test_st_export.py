"""sentence-transformers interop: a saved model folder loads with SentenceTransformer(folder) and gives
conba's vectors; encode() takes normalize_embeddings / precision; get_sentence_embedding_dimension()."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import conba
from conba.heads import HeadConfig
from conba.model import ConbaModel, ModelError

st = pytest.importorskip("sentence_transformers", reason="pip install 'conba[dev]' (sentence-transformers)")

CODES = ["def add(a, b):\n    return a + b\n", "int add(int a, int b) { return a + b; }",
         "func gcd(a, b int) int {\n\tfor b != 0 {\n\t\ta, b = b, a%b\n\t}\n\treturn a\n}" * 3]


def _tiny(tiny_backbone, kind: str, **head) -> ConbaModel:
    model = ConbaModel.create(str(tiny_backbone), head=HeadConfig(kind=kind, **head), max_length=64)
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.head.parameters():
            p.normal_(0, 0.3)
    return model


def _same_vectors(folder, codes=CODES) -> None:
    ours = conba.load_model(folder).encode(codes)
    theirs = st.SentenceTransformer(str(folder), device="cpu").encode(codes)
    assert theirs.shape == ours.shape
    cosine = np.sum(ours * theirs, axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosine.min() >= 0.9999, cosine


@pytest.mark.parametrize("kind,head", [("linear", {"out_dim": 16}), ("linear", {"pooling": "cls"}),
                                       ("none", {}), ("none", {"pooling": "cls"})])
@pytest.mark.slow
def test_sentence_transformers_loads_the_saved_folder(tiny_backbone, tmp_path, kind, head):
    model = _tiny(tiny_backbone, kind, **head)
    folder = model.save(tmp_path / "m", sentence_transformers=True)
    assert (folder / "modules.json").exists() and (folder / "conba_config.json").exists()
    _same_vectors(folder)
    model.save(folder)  # saved again without: the sentence-transformers files go
    assert not (folder / "modules.json").exists() and not (folder / "1_Pooling").exists()


def test_models_without_an_equivalent_are_refused(tiny_backbone, tmp_path):
    with pytest.raises(ModelError, match="head is 'conba'"):
        _tiny(tiny_backbone, "conba").save(tmp_path / "a", sentence_transformers=True)
    with pytest.raises(ModelError, match="storage='full'"):
        _tiny(tiny_backbone, "linear").save(tmp_path / "b", storage="delta", sentence_transformers=True)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.slow
def test_sentence_transformers_argument_names(tiny_backbone):
    from sentence_transformers.quantization import quantize_embeddings

    model = _tiny(tiny_backbone, "linear", out_dim=16)
    assert model.get_sentence_embedding_dimension() == model.get_embedding_dimension() == 16
    raw = model.encode(CODES, normalize=False)
    assert np.allclose(model.encode(CODES, normalize_embeddings=False), raw)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0)
    unit = model.encode(CODES)
    assert np.array_equal(model.encode(CODES, precision="float32"), unit)
    for precision in ("binary", "ubinary", "int8", "uint8"):
        got = model.encode(CODES, precision=precision)
        assert np.array_equal(got, quantize_embeddings(unit, precision=precision)), precision
    assert model.encode(CODES, precision="ubinary").shape == (3, 2)
    with pytest.raises(ValueError, match="unknown precision"):
        model.encode(CODES, precision="float8")


@pytest.mark.slow
def test_shipped_default_loads_in_sentence_transformers(tmp_path):
    """Golden: the shipped default model, saved full for sentence-transformers, gives the same vectors."""
    folder = conba.load_model("default").save(tmp_path / "default-st", sentence_transformers=True)
    _same_vectors(folder)


@pytest.mark.slow
def test_shipped_default_with_its_input_view(tmp_path):
    """sentence-transformers sees the text it is given: applying the model's input view first (what
    conba's encode() does for snippets with a language) gives conba's vectors."""
    from conba.syntax.view import apply_views

    model = conba.load_model("default")
    folder = model.save(tmp_path / "default-st", sentence_transformers=True)
    codes = ["import os\n# add two numbers\ndef add(a, b):\n    return a + b  # the sum\n",
             "#include <cstdio>\n// greatest common divisor\nint gcd(int a, int b) { return b ? gcd(b, a % b) : a; }\n"]
    langs = ["python", "cpp"]
    ours = conba.load_model(folder).encode(codes, languages=langs)
    viewed, _ = apply_views(codes, langs, model.view)
    theirs = st.SentenceTransformer(str(folder), device="cpu").encode(viewed)
    cosine = np.sum(ours * theirs, axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosine.min() >= 0.9999, cosine
