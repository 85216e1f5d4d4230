"""The product's wheel holds the product only: no research suite (conba_research, its own distribution in
research/), no developer benchmark or tool, no test helper. Built with pip from this checkout (slow tier)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# what lives in research/ now: none of it may come back into the product's wheel
DEVELOPER_TOOLS = [f"conba/bench/{m}.py" for m in ("ann", "clones_profile", "corpus", "gpu", "gpu_report", "gpu_tree",
                                                    "index_scale", "ivf", "ivf_data", "ivf_encode", "ivf_real",
                                                    "plan", "results", "view_stats")] + [
    "conba/serve/load_test.py", "conba/mapping/evaluate.py", "conba/cli/bench_gpu_cmd.py",
    "conba/cli/bench_tools_cmd.py", "conba/cli/passthrough.py", "conba/testing.py"] + [
    f"conba/heads/{m}.py" for m in ("seed_layer", "scan", "selective_scan", "control_codes", "gate")]  # research heads


def wheel_files(tmp_path: Path) -> list[str]:
    """The file names inside the wheel ``pip wheel --no-deps`` builds from this checkout."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, text=True)
    (wheel,) = tmp_path.glob("conba-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@pytest.mark.slow
def test_the_wheel_holds_the_product_only(tmp_path):
    pytest.importorskip("setuptools")  # builds without isolation (setuptools >= 70.1 writes wheels itself)
    names = wheel_files(tmp_path)
    assert "conba/cli/main.py" in names and "conba/bench/speed.py" in names  # the product, bench speed included
    assert "conba/default_model/head/head.safetensors" in names
    assert [n for n in names if n.startswith("conba_research/")] == []
    assert sorted(set(DEVELOPER_TOOLS) & set(names)) == []
    with zipfile.ZipFile(next(tmp_path.glob("conba-*.whl"))) as archive:
        readout = archive.read("conba/model/window_readout.py").decode()
    assert "def encode_windows" not in readout  # the research reference of the read-out stays in research/
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"conba"}
