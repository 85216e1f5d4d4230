import numpy as np
import pytest
import torch

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from conba.engine.static_quant import StaticQuant, calibration_batches, calibration_reader  # noqa: E402
from conba.errors import ConfigError  # noqa: E402
from conba.heads import HeadConfig  # noqa: E402
from conba.model import ConbaModel  # noqa: E402
from conba.prune import PruneConfig, PruneModule  # noqa: E402

CODES = ["def add(a, b):\n    return a + b\n" * 3, "x = 1", "static int add(int a, int b) { return a + b; }",
         "function biggest(xs) { return max(xs); }" * 2, "print ( x )", "for i in range(3):\n    print(i)\n"]


@pytest.fixture()
def model(tiny_backbone):
    torch.manual_seed(0)
    return ConbaModel.create(str(tiny_backbone), HeadConfig(kind="linear", languages=["python", "java"]))


def float_weight_matmuls(path) -> list[str]:
    """MatMul / Gemm nodes (not the scorer's) still multiplying by a float32 weight initializer."""
    import onnx

    graph = onnx.load(str(path)).graph
    weights = {i.name for i in graph.initializer if i.data_type == onnx.TensorProto.FLOAT}
    return [n.name for n in graph.node if n.op_type in ("MatMul", "Gemm") and "scorer" not in n.name
            and n.input[1] in weights]


def encode_with(model, directory) -> np.ndarray:
    from conba.engine.onnx_runtime import OnnxEncoder

    model._engines[("onnx", model.pruner is not None)] = OnnxEncoder(directory)
    return model.encode(CODES, engine="onnx")


def test_calibration_batches_are_encode_inputs(model):
    batches = calibration_batches(model, CODES, "python", batch_size=4)
    assert [ids.shape[0] for ids, _ in batches] == [4, 2]  # length-sorted, 4 to a batch
    for ids, mask in batches:
        assert ids.dtype == np.int64 and mask.dtype == np.int64 and ids.shape == mask.shape
    assert sum(int(m.sum()) for _, m in batches) == sum(len(x) for x in model.backbone.tokenizer(CODES)["input_ids"])
    with pytest.raises(ConfigError, match="calibration snippets"):
        calibration_batches(model, [])
    with pytest.raises(ConfigError, match="2 calibration snippets but 1 languages"):
        calibration_batches(model, CODES[:2], ["python"])


def test_reader_yields_feeds_then_none_and_rewinds():
    feeds = [{"x": np.zeros((1, 2), np.int64)}, {"x": np.ones((1, 2), np.int64)}]
    reader = calibration_reader(feeds)
    assert [reader.get_next()["x"].sum(), reader.get_next()["x"].sum(), reader.get_next()] == [0, 2, None]
    reader.rewind()
    assert reader.get_next() is feeds[0] and len(reader) == 2
    reader.set_range(1, 2)
    assert [reader.get_next() is feeds[1], reader.get_next()] == [True, None]


def test_bad_static_config():
    batch = ((np.zeros((1, 2), np.int64), np.ones((1, 2), np.int64)),)
    with pytest.raises(ConfigError, match="calibration method 'kl'"):
        StaticQuant(batch, method="kl")
    with pytest.raises(ConfigError, match="format 'int4'"):
        StaticQuant(batch, format="int4")
    with pytest.raises(ConfigError, match="at least one calibration batch"):
        StaticQuant(())
    assert StaticQuant(batch, format="qoperator", method="percentile", fuse_attention=False).name \
        == "static-qoperator-percentile-unfused"
    assert StaticQuant(batch, float_outputs=False).name == "static-qdq-minmax-qout"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_static_export_close_to_torch(model, tmp_path, fmt):
    from conba.engine.onnx_export import export_onnx, read_manifest

    sq = StaticQuant(calibration_batches(model, CODES, batch_size=4), format=fmt)
    directory = export_onnx(model, tmp_path / fmt, prune=False, static=sq)
    manifest = read_manifest(directory)
    assert manifest["quantized"] is True and manifest["quantization"] == f"static-{fmt}-minmax"
    assert manifest["files"] == ["segment0.int8.onnx"] and not list(directory.glob("*.fp32.onnx"))
    assert float_weight_matmuls(directory / "segment0.int8.onnx") == []  # every weight MatMul calibrated
    if fmt == "qdq":  # MatMul outputs stay float32 (no QuantizeLinear after a MatMul)
        import onnx

        graph = onnx.load(str(directory / "segment0.int8.onnx")).graph
        matmul_out = {o for n in graph.node if n.op_type == "MatMul" for o in n.output}
        assert not [n for n in graph.node if n.op_type == "QuantizeLinear" and n.input[0] in matmul_out]
    cos = (encode_with(model, directory) * model.encode(CODES)).sum(1)
    assert cos.min() > 0.95


@pytest.mark.slow
def test_static_export_with_pruning_calibrates_every_segment(model, tmp_path):
    import onnx

    from conba.engine.onnx_export import export_onnx

    torch.manual_seed(2)
    model.pruner = PruneModule(PruneConfig(layers=[1], keep_ratio=0.5, dim=32, num_layers=2))
    sq = StaticQuant(calibration_batches(model, CODES, batch_size=4), method="percentile", fuse_attention=False)
    directory = export_onnx(model, tmp_path / "pruned", static=sq)
    for f in ("segment0.int8.onnx", "segment1.int8.onnx"):
        ops = {n.op_type for n in onnx.load(str(directory / f)).graph.node}
        assert "QuantizeLinear" in ops and "Attention" not in ops  # quantised, attention left unfused
        assert float_weight_matmuls(directory / f) == []
    cos = (encode_with(model, directory) * model.encode(CODES)).sum(1)
    assert cos.min() > 0.95
