import numpy as np
import pytest
import torch

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from conba.heads import HeadConfig  # noqa: E402
from conba.model import ConbaModel  # noqa: E402
from conba.prune import PruneConfig, PruneModule  # noqa: E402

CODES = ["def add(a, b):\n    return a + b\n" * 3, "x = 1", "static int add(int a, int b) { return a + b; }",
         "function biggest(xs) { return max(xs); }" * 2, "print ( x )"]


@pytest.fixture()
def model(tiny_backbone, tmp_path, monkeypatch):
    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(0)
    return ConbaModel.create(str(tiny_backbone), HeadConfig(kind="linear", languages=["python", "java"]))


@pytest.mark.slow
def test_onnx_fp32_matches_torch(model):
    exact = model.encode(CODES, languages="python")
    onnx = model.encode(CODES, languages="python", engine="onnx-fp32")
    assert np.abs(onnx - exact).max() < 1e-5


def test_onnx_int8_close_to_torch(model):
    exact = model.encode(CODES)
    int8 = model.encode(CODES, engine="onnx")
    cos = (int8 * exact).sum(1)
    assert cos.min() > 0.98
    assert model._engines[("onnx", False)].manifest["quantized"] is True


@pytest.mark.slow
def test_onnx_with_pruning_matches_torch_pruning(model):
    torch.manual_seed(2)
    model.pruner = PruneModule(PruneConfig(layers=[1], keep_ratio=0.5, dim=32, num_layers=2))
    pruned = model.encode(CODES)
    onnx = model.encode(CODES, engine="onnx-fp32")
    assert np.abs(onnx - pruned).max() < 1e-5
    assert len(model._engines[("onnx-fp32", True)].sessions) == 2  # cut at the pruning layer
    model.use_pruning = False
    assert np.abs(model.encode(CODES, engine="onnx-fp32") - model.encode(CODES)).max() < 1e-5


@pytest.mark.slow
def test_export_is_cached_and_reused(model, tmp_path):
    from conba.engine.onnx_runtime import export_dir

    model.encode(CODES[:2], engine="onnx-fp32")
    directory = export_dir(model, quantize=False, prune=False)
    assert (directory / "manifest.json").exists()
    mtime = (directory / "manifest.json").stat().st_mtime
    model._engines.clear()
    model.encode(CODES[:2], engine="onnx-fp32")
    assert (directory / "manifest.json").stat().st_mtime == mtime


def test_bad_engine_and_manifest(model, tmp_path):
    from conba.engine.onnx_runtime import OnnxEncoder

    with pytest.raises(ValueError, match="unknown engine"):
        model.encode(CODES, engine="tensorrt")
    with pytest.raises(FileNotFoundError, match="manifest"):
        OnnxEncoder(tmp_path)
