"""The research suite's ConbaLayer heads through the product's ONNX engine: their offset language codes are
an input of the exported graph, so ONNX matches torch per language (the product's own engine tests use the
linear head)."""

import numpy as np
import pytest
import torch

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from conba.heads import HeadConfig  # noqa: E402
from conba.model import ConbaModel  # noqa: E402

CODES = ["def add(a, b):\n    return a + b\n" * 3, "x = 1", "static int add(int a, int b) { return a + b; }"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["conba", "conba-scan"])
def test_onnx_fp32_matches_torch_with_offset_codes(tiny_backbone, tmp_path, monkeypatch, kind: str) -> None:
    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(0)
    model = ConbaModel.create(str(tiny_backbone), HeadConfig(kind=kind, languages=["python", "java"], state_dim=4))
    with torch.no_grad():  # W and fc2 away from their zero start, so the language changes the vector
        for p in model.head.parameters():
            p.add_(0.1 * torch.randn_like(p))
    languages = ["python", "java", "java"]
    exact = model.encode(CODES, languages=languages)
    assert not np.allclose(exact, model.encode(CODES, languages="python"), atol=1e-4)
    onnx = model.encode(CODES, languages=languages, engine="onnx-fp32")
    assert np.abs(onnx - exact).max() < 1e-5
