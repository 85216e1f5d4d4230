"""``conba bench gpu`` runs as it stands on a CPU with tiny sizes (the GPU run is the same code with
--device cuda), and its inputs need no network: the function tree and the stand-in model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.errors import ConfigError
from conba_research.bench import gpu_tree
from conba_research.bench.gpu import GpuBenchConfig, resolve_bench_model


def _source(root: Path, files: int = 6) -> Path:
    for i in range(files):
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"m{i}.py").write_text(
            f"def add{i}(a, b):\n    return a + b + {i}\n\n\nclass C{i}:\n    def scale(self, xs):\n"
            f"        return [x * {i} for x in xs]\n", encoding="utf-8")
    (root / "pkg" / "tests").mkdir(exist_ok=True)
    (root / "pkg" / "tests" / "test_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    return root


def test_tree_holds_enough_functions_and_is_reused(tmp_path):
    src = _source(tmp_path / "src")
    info = gpu_tree.build_tree(tmp_path / "tree", 5, [src])
    assert info["functions"] >= 5 and info["files"] == 3  # two defs per file, sorted order, tests/ skipped
    assert not list((tmp_path / "tree").rglob("test_x.py"))
    assert gpu_tree.build_tree(tmp_path / "tree", 5, [src]) == info
    snippets = gpu_tree.tree_snippets(tmp_path / "tree", 4)
    assert len(snippets) == 4 and all(s.lstrip().startswith("def ") for s in snippets)
    with pytest.raises(ConfigError, match="only 12 Python functions"):
        gpu_tree.build_tree(tmp_path / "big", 1000, [src])


def test_stand_in_model_when_the_model_cannot_load(tiny_backbone, tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_tree, "MINILM_SHAPE", {"hidden_size": 32, "num_hidden_layers": 1,
                                                   "num_attention_heads": 4, "intermediate_size": 64,
                                                   "max_position_embeddings": 64})
    cfg = GpuBenchConfig(out=str(tmp_path), model=str(tmp_path / "no-such-model"), tokenizer=str(tiny_backbone))
    logs: list[str] = []
    name, what = resolve_bench_model(cfg, tmp_path, logs.append)
    assert what.startswith("stand-in") and "cannot load" in logs[0]
    from conba.model import load_model

    assert load_model(name).encode(["def f(): pass"]).shape == (1, 32)
    cfg.tokenizer = str(tmp_path / "missing")
    (tmp_path / "stand-in-minilm" / "config.json").unlink()
    with pytest.raises(ConfigError, match="no tokenizer folder"):
        resolve_bench_model(cfg, tmp_path, logs.append)


@pytest.mark.slow  # subprocesses / worker processes: seconds each (the fast tier stays under a minute)
def test_bench_gpu_runs_on_cpu_with_tiny_sizes(tiny_model, tmp_path):
    pytest.importorskip("sentence_transformers")
    src = _source(tmp_path / "src")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["bench", "gpu", "--device", "cpu", "-m", tiny_model, "-n", "6", "--repeats", "1",
                                      "--functions", "8", "--cpu-functions", "4", "--source", str(src),
                                      "--dtypes", "float32,bfloat16", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "gpu_bench.json").read_text(encoding="utf-8"))
    assert set(report["speed"]) == {"float32", "bfloat16"}
    for dtype, run in report["speed"].items():
        assert run["placement"] == {"device": "cpu", "dtype": dtype}
        assert {"st", "exact"} <= set(run["variants"]) and run["timed_snippets"] == 6
        assert run["variants"]["exact"]["snippets_per_s"] > 0
    assert report["speed"]["float32"]["cos_headless_exact_vs_st"]["min"] > 0.9999
    device_run = report["index"]["device_run"]
    assert device_run["device"] == "cpu" and device_run["functions"] >= 8
    assert "cpu_run" not in report["index"]  # the device is the CPU: no comparison with itself
    text = (out / "gpu_bench.md").read_text(encoding="utf-8")
    assert "| float32 | 32 | 6 |" in text and "| bfloat16 | 32 | 6 |" in text and "--device cpu" in text
    assert text in result.output


def test_bad_dtypes_list_is_a_usage_error():
    result = CliRunner().invoke(cli, ["bench", "gpu", "--dtypes", "float32,fp8"])
    assert result.exit_code == 2 and "fp8" in result.output
