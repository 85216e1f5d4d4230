"""Ray's GPU path with --device / --dtype (issue 36), without a cluster: the actor pool asks for one GPU
per actor when the cluster has GPUs and the device allows them, and each actor places its model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("ray")

from conba.index.errors import CodeIndexError  # noqa: E402
from conba.index.scale.ray_encode import EncodeActor, ModelSource, RayEncoder  # noqa: E402


class FakeRay:
    def __init__(self, resources: dict):
        self.resources = resources

    def cluster_resources(self) -> dict:
        return self.resources


@pytest.mark.parametrize("device,gpus,expect", [
    ("auto", 2, (2, {"num_gpus": 1, "num_cpus": 1})),
    ("cuda", 2, (2, {"num_gpus": 1, "num_cpus": 1})),
    ("cpu", 2, (4, {"num_cpus": 1})),      # --device cpu: CPU actors even where there are GPUs
    ("auto", 0, (4, {"num_cpus": 1})),
])
def test_pool_follows_the_device(device, gpus, expect):
    enc = RayEncoder.__new__(RayEncoder)
    enc.cpus_per_actor, enc.max_actors, enc.device, enc.dtype = 1, None, device, "auto"
    size, per_actor, _ = enc._pool(FakeRay({"CPU": 4, "GPU": gpus}), blocks=10)
    assert (size, per_actor) == expect
    if device != "cuda":  # (--device cuda with an ONNX engine is an error)
        size, per_actor, _ = enc._pool(FakeRay({"CPU": 4, "GPU": gpus}), blocks=10, engine="onnx")
        assert "num_gpus" not in per_actor  # ONNX Runtime runs on the CPU


def test_cuda_on_a_cluster_without_gpus_is_an_error():
    enc = RayEncoder.__new__(RayEncoder)
    enc.cpus_per_actor, enc.max_actors, enc.device, enc.dtype = 1, None, "cuda:1", "auto"
    with pytest.raises(CodeIndexError, match="no GPUs"):
        enc._pool(FakeRay({"CPU": 4}), blocks=3)


def test_actor_places_its_model_and_checks_the_float32_fingerprint(tiny_model):
    from conba.model import load_model

    fingerprint = load_model(tiny_model).embedding_fingerprint()
    actor = EncodeActor(ModelSource(tiny_model, fingerprint), None, 1, gpu=False, dtype="bfloat16")
    assert actor.model.dtype == torch.bfloat16 and actor.model.device.type == "cpu"
    out = actor({"hash": np.array(["h1"]), "language": np.array(["python"]),
                 "code": np.array(["def add(a, b):\n    return a + b\n"])})
    assert out["vector"].shape == (1, actor.model.dim) and out["vector"].dtype == np.float32
