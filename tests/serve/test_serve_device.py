"""`conba serve --device/--dtype` (issue 36): the model is placed once and stays there; an index built in
float32 is served in half precision (the fingerprint does not depend on the dtype)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, tiny_model) -> Path:
    from conba.index import Index
    from helpers import TASKS, write_tree

    root = write_tree(tmp_path_factory.mktemp("src"), {f"{t}.py": c["python"] for t, c in TASKS.items()})
    folder = tmp_path_factory.mktemp("serve-device") / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([root])
    return folder


def test_serve_in_bfloat16_keeps_the_model_placed(index_dir, tiny_model):
    import torch

    from conba.model import load_model
    from conba.serve import create_app

    app = create_app(index_dir, reload_interval=0, device="cpu", dtype="bfloat16")
    state = app.state.conba
    assert state.model.dtype == torch.bfloat16 and state.model.device.type == "cpu"
    assert state.fingerprint == load_model(tiny_model).embedding_fingerprint()
    with TestClient(app) as client:
        health = client.get("/health").json()
        assert health.get("status", "ok") in ("ok", "ready"), health
        r = client.post("/encode", json={"snippets": [GCD], "languages": ["python"]})
        assert r.status_code == 200, r.text
        want = load_model(tiny_model).encode([GCD], languages=["python"])
        assert float(np.array(r.json()["vectors"])[0] @ want[0]) > 0.99
        hits = client.post("/search", json={"code": GCD, "result_language": "python", "k": 2})
        assert hits.status_code == 200, hits.text
    assert state.model.dtype == torch.bfloat16  # still placed after the requests


def test_serve_onnx_with_a_gpu_is_refused(index_dir):
    pytest.importorskip("onnxruntime")
    from conba.errors import ConfigError
    from conba.serve import create_app

    with pytest.raises(ConfigError, match="runs on the CPU"):
        create_app(index_dir, reload_interval=0, engine="onnx", device="cuda")
