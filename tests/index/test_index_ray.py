"""`conba index --ray`: encoding on a local Ray instance (2 CPUs) gives a local run's vectors, and a
driver killed mid-run resumes where it stopped."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import kill_conba_when, sql_count

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "polyglot"


@pytest.fixture(scope="module")
def cluster():
    """A local Ray instance with 2 CPUs, started (and stopped) by this module; yields its address. Ray is
    imported here, not at collection, where it costs seconds to the fast tier that deselects these tests."""
    pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install 'conba[ray]'")
    pytest.importorskip("pyarrow", reason="Ray Data needs pyarrow: pip install 'conba[ray]'")
    import ray

    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _vectors(folder: Path) -> dict[str, np.ndarray]:
    db = sqlite3.connect(str(folder / "index.sqlite"))
    try:
        return {h: np.frombuffer(v, dtype=np.float32) for h, v in db.execute("SELECT hash, vector FROM vectors")}
    finally:
        db.close()


def _count(folder: Path) -> int:
    return sql_count(folder / "index.sqlite", "SELECT count(*) FROM vectors")


def _assert_same(local: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> None:
    assert set(local) == set(other)
    cos = [float(local[h] @ other[h]) / float(np.linalg.norm(local[h]) * np.linalg.norm(other[h])) for h in local]
    assert min(cos) >= 0.9999, min(cos)


@pytest.mark.slow
def test_ray_vectors_equal_local_run(tmp_path, tiny_model, cluster):
    from conba.index import Index
    from conba.index.scale.ray_encode import RayEncoder

    with Index(tmp_path / "local", model=tiny_model) as idx:
        idx.add([EXAMPLE])
    encoder = RayEncoder(cluster)
    with Index(tmp_path / "ray", model=tiny_model) as idx:
        report = idx.add([EXAMPLE], encoder=encoder, commit_every=8)
        hits = idx.search("def gcd(a, b):\n    return a", k=3)
    assert report.units_encoded == report.units_total == 51
    assert encoder.actors == 2 and encoder.worker_pids and os.getpid() not in encoder.worker_pids
    _assert_same(_vectors(tmp_path / "local"), _vectors(tmp_path / "ray"))
    assert len(hits) == 3


@pytest.mark.slow
def test_ray_driver_killed_then_resumed(tmp_path, tiny_model, cluster):
    from conba.index import Index

    proj = tmp_path / "proj"
    proj.mkdir()
    for f in range(3):
        body = "".join(f"def f{f}_{i}(x):\n    return x * {f * 100 + i} + {i}\n\n" for i in range(10))
        (proj / f"m{f}.py").write_text(body)
    folder = tmp_path / "idx"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CONBA_INDEX_COMMIT_EVERY="2",
               CONBA_INDEX_TEST_DELAY="0.5", TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-m", "conba.cli.main", "index", str(proj), "--index", str(folder), "--model", tiny_model,
           "--json", "--ray", cluster]
    kill_conba_when(cmd[3:], lambda: _count(folder) >= 4, env, timeout=120, what="the Ray driver",
                    log=tmp_path / "driver.log")
    done = _count(folder)
    assert 4 <= done < 30, f"{done} vectors committed before the kill"

    env.pop("CONBA_INDEX_TEST_DELAY")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)  # stdout stays clean JSON: Ray's logs go elsewhere
    assert report["units_encoded"] == 30 - done and report["units_total"] == 30
    with Index(tmp_path / "local", model=tiny_model) as idx:
        idx.add([proj])
    _assert_same(_vectors(tmp_path / "local"), _vectors(folder))
