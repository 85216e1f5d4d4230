"""Device and precision (issue 36): placement, half precision through the same code paths on the CPU,
the batch plan per device, and a fingerprint that depends on neither."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conba.engine.batching import (
    CPU_BATCH_SIZE,
    CPU_BATCH_TOKENS,
    GPU_BATCH_SIZE,
    GPU_BATCH_TOKENS,
    length_sorted_batches,
    plan_batches,
)
from conba.engine.device import (
    HALF_COSINE_TOLERANCE,
    place_model,
    resolve_dtype,
    resolve_placement,
)
from conba.errors import ConfigError, UsageError
from conba.model import ConbaModel, load_model

CODES = ["def add(a, b):\n    return a + b\n", "static int add(int a, int b) {\n    return a + b;\n}",
         "function biggest(xs) {\n  return Math.max(...xs);\n}\n" * 6]
LANGS = ["python", "java", "javascript"]


def test_auto_dtype_is_float16_on_cuda_only():
    assert resolve_dtype("auto", torch.device("cuda")) == torch.float16
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert resolve_dtype("auto", torch.device("mps")) == torch.float32
    assert resolve_dtype("bfloat16", torch.device("cpu")) == torch.bfloat16
    assert resolve_dtype(torch.float16, torch.device("cpu")) == torch.float16
    with pytest.raises(ConfigError, match="unknown dtype"):
        resolve_dtype("float8", torch.device("cpu"))


def test_placement_for_onnx_is_cpu_float32_and_refuses_gpu_or_half():
    where = resolve_placement("auto", "auto", engine="onnx")
    assert (where.device.type, where.dtype) == ("cpu", torch.float32)
    with pytest.raises(ConfigError, match="runs on the CPU"):
        resolve_placement("cuda", "auto", engine="onnx")
    with pytest.raises(ConfigError, match="runs in float32"):
        resolve_placement("cpu", "float16", engine="onnx-fp32")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cuda_without_a_gpu_is_a_one_line_error():
    with pytest.raises(UsageError, match="CUDA is not available"):
        resolve_placement("cuda:0", "auto")


def test_batch_plan_per_device():
    assert plan_batches("cpu") == (CPU_BATCH_SIZE, CPU_BATCH_TOKENS) == (32, 4096)
    assert plan_batches(torch.device("cuda")) == (GPU_BATCH_SIZE, GPU_BATCH_TOKENS)
    assert plan_batches("mps").batch_size == GPU_BATCH_SIZE
    assert plan_batches("cuda", batch_size=8, max_tokens=None) == (8, None)  # what is given wins
    assert plan_batches("cpu", max_tokens=100).max_tokens == 100
    with pytest.raises(ValueError):
        plan_batches("cpu", max_tokens="lots")
    # a GPU plan keeps 256 snippets of 512 tokens in one batch; the CPU plan cuts them to 8
    ids = [[1] * 512] * 300
    for device, sizes in (("cuda", [256, 44]), ("cpu", [8] * 37 + [4])):
        size, budget = plan_batches(device)
        assert [len(b.index) for b in length_sorted_batches(ids, size, 0, budget)] == sizes


def test_encode_uses_the_plan_of_the_model_device(tiny_model, monkeypatch):
    import conba.engine as engine

    seen = []
    real = engine.length_sorted_batches

    def spy(ids, batch_size, pad_id, max_tokens=None, **kwargs):
        seen.append((batch_size, max_tokens))
        return real(ids, batch_size, pad_id, max_tokens, **kwargs)

    monkeypatch.setattr(engine, "length_sorted_batches", spy)
    model = load_model(tiny_model)
    model.encode(CODES, LANGS)
    model.encode(CODES, LANGS, batch_size=2, max_batch_tokens=None)
    assert seen == [(32, 4096), (2, None)]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_on_cpu_stays_close_and_keeps_the_fingerprint(tiny_model, dtype):
    ref_model = load_model(tiny_model)
    ref = ref_model.encode(CODES, LANGS)
    fingerprint, embedding_fp = ref_model.fingerprint(), ref_model.embedding_fingerprint()
    half = load_model(tiny_model, device="cpu", dtype=dtype)
    assert half.dtype == getattr(torch, dtype) and half.device.type == "cpu"
    got = half.encode(CODES, LANGS)
    assert got.dtype == np.float32 and got.shape == ref.shape
    assert np.all(np.sum(got * ref, axis=1) > 0.99)
    assert (half.fingerprint(), half.embedding_fingerprint()) == (fingerprint, embedding_fp)
    other = load_model(tiny_model).half() if dtype == "float16" else load_model(tiny_model).bfloat16()
    assert other.fingerprint() == fingerprint  # model.half() as sentence-transformers users write it


def test_encode_device_and_dtype_arguments_move_the_model(tiny_model):
    model = load_model(tiny_model)
    ref = model.encode(CODES, LANGS)
    got = model.encode(CODES, LANGS, device="cpu", dtype="bfloat16")
    assert model.dtype == torch.bfloat16  # in place, as sentence-transformers' encode(device=) moves it
    assert np.all(np.sum(got * ref, axis=1) > 0.99)
    with pytest.raises(ConfigError, match="loaded again"):
        model.encode(CODES, LANGS, dtype="float32")  # rounded weights cannot come back
    with pytest.raises(ConfigError, match="cannot save a model cast"):
        model.save("unused")


def test_float32_placement_changes_nothing(tiny_model):
    a = load_model(tiny_model)
    b = place_model(load_model(tiny_model), "cpu", "auto")
    assert b.dtype == torch.float32
    np.testing.assert_array_equal(a.encode(CODES, LANGS), b.encode(CODES, LANGS))


def test_fingerprint_still_follows_the_weights_after_a_cast(tiny_backbone):
    model = ConbaModel.create(str(tiny_backbone), max_length=64)
    before = model.fingerprint()
    model.half()
    assert model.fingerprint() == before
    model.float()  # the rounded weights are other weights
    assert model.fingerprint() != before


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_shipped_model_in_half_precision_within_tolerance(dtype):
    """The tolerance that lets ``--dtype auto`` pick float16 on CUDA, measured here on the CPU kernels:
    float16 stays within the golden vectors' 1e-3 and within HALF_COSINE_TOLERANCE in cosine."""
    from tests.model.test_golden import CODES as GOLDEN_CODES
    from tests.model.test_golden import GOLDEN

    codes, langs = [c for _, c in GOLDEN_CODES], [lang for lang, _ in GOLDEN_CODES]
    ref = load_model("default").encode(codes, languages=langs)
    model = load_model("default", device="cpu", dtype=dtype)
    got = model.encode(codes, languages=langs)
    assert float(np.max(1 - np.sum(got * ref, axis=1))) <= HALF_COSINE_TOLERANCE[getattr(torch, dtype)]
    if dtype == "float16":
        np.testing.assert_allclose(got[:, ::48], GOLDEN["default"]["dims"], atol=1e-3)
        np.testing.assert_allclose(got @ got.T, GOLDEN["default"]["cosine"], atol=1e-3)


def test_a_model_saved_in_half_precision_has_one_fingerprint_in_every_dtype(tiny_backbone, tmp_path):
    """A backbone stored in bfloat16 (as many hub embedding models are) runs in float32 on a CPU and in
    float16 on a GPU; both give the fingerprint of the weights as loaded, so their indexes mix."""
    import shutil

    from transformers import AutoModel

    folder = tmp_path / "bf16"
    shutil.copytree(tiny_backbone, folder)
    AutoModel.from_pretrained(str(tiny_backbone)).to(torch.bfloat16).save_pretrained(folder)
    loaded = ConbaModel.create(str(folder), max_length=64)
    assert loaded.dtype == torch.bfloat16  # loaded as stored
    as_loaded = loaded.fingerprint()
    for dtype in ("float32", "float16", "bfloat16"):
        model = place_model(ConbaModel.create(str(folder), max_length=64), "cpu", dtype)
        assert model.dtype == getattr(torch, dtype)
        assert model.fingerprint() == as_loaded, dtype
        assert model.encode(CODES, LANGS).shape == (3, model.dim)


def test_load_model_with_one_of_device_or_dtype_leaves_the_other_auto(tiny_model, monkeypatch):
    """As on the command line: ``dtype`` alone places on the ``auto`` device (a GPU if there is one),
    ``device`` alone picks the ``auto`` dtype there; neither leaves the model as it loads."""
    import conba.engine.device as device_mod

    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(device_mod, "place_model",
                        lambda model, device, dtype, *a, **k: calls.append((device, dtype)) or model)
    load_model(tiny_model, dtype="float32")
    load_model(tiny_model, device="cpu")
    load_model(tiny_model)
    assert calls == [("auto", "float32"), ("cpu", "auto")]
