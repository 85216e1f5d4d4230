"""The GPU training sweep (conba_research.gpu_train, scripts/gpu_train.sh) at tiny size on the CPU: the
tensor pack, prepare/unpack, the decision rule, the time plan, the deadline, and the sweep end to end
(runs in their own processes as on the GPU machine; result JSON, checkpoints back as conba models)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import torch

from conba.errors import FormatError, UsageError
from conba.utils.saved import read_tensors, write_tensors
from conba_research.gpu_train import tensor_pack
from conba_research.gpu_train import variants as V
from conba_research.gpu_train.dev_eval import SETS, TOLERANCE, decide
from helpers import make_tiny_dataset, write_tree

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "scripts" / "gpu_train.sh").is_file())


def make_shared_data(root: Path) -> Path:
    """The layout of ../shared/data in miniature: grouped JSONL and two tiny grouped repositories."""
    root.mkdir(parents=True, exist_ok=True)
    for name, copies in (("atcoder_train", 3), ("mbxp_train", 2), ("atcoder_dev", 1), ("mbxp_dev", 1)):
        make_tiny_dataset(root / f"{name}.jsonl", copies=copies)
    bodies = {"add": ("a + b", "add"), "mul": ("a * b", "mul")}
    files, groups = {}, []
    for task, (expr, fn) in bodies.items():
        members = {"cpp": f"cpp/{task}.cpp", "javascript": f"javascript/{task}.js", "rust": f"rust/{task}.rs",
                   "csharp": f"csharp/{task}.cs"}
        files[members["cpp"]] = f"int {fn}(int a, int b) {{\n    return {expr};\n}}\n"
        files[members["javascript"]] = f"function {fn}(a, b) {{\n  return {expr};\n}}\n"
        files[members["rust"]] = f"fn {fn}(a: i32, b: i32) -> i32 {{\n    {expr}\n}}\n"
        files[members["csharp"]] = f"class C {{\n  static int {fn}(int a, int b) {{\n    return {expr};\n  }}\n}}\n"
        groups.append({"group": task, "files": list(members.values())})
    for repo in ("algorithms_dev", "ports_dev"):
        write_tree(root / repo, files)
        (root / repo / "groups.jsonl").write_text("".join(json.dumps(g) + "\n" for g in groups))
    return root


def test_tensor_pack_round_trip_is_exact_and_the_reference_is_checked():
    g = torch.Generator().manual_seed(0)
    ref = {"w": torch.randn(64, 32, generator=g).half(), "b": torch.randn(32, generator=g).half()}
    special = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), 65504, -65504, 6e-8, -6e-8]).half()
    ref["s"] = special.flip(0)  # distances across zero, to and from the extremes
    tensors = {"s": special, "w": (ref["w"].float() * 1.01).half(), "b": torch.randn(32, generator=g).half(),
               "ids": torch.arange(7).reshape(1, 7), "new": torch.randn(5, generator=g).half()}
    blob = tensor_pack.encode(tensors, ref)
    back = tensor_pack.decode(blob, ref)
    assert set(back) == set(tensors)
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and torch.equal(back[k], v), k
    assert len(blob) < len(tensor_pack.encode(tensors))  # close to its reference: packs smaller
    with pytest.raises(FormatError, match="checksum"):
        tensor_pack.decode(blob, {k: (v.float() + 1).half() for k, v in ref.items()})
    with pytest.raises(FormatError, match="needs its float16 reference"):
        tensor_pack.decode(blob)
    with pytest.raises(FormatError, match="not a conba tensor pack"):
        tensor_pack.decode(b"PK\x03\x04" + blob[4:])


def test_decision_rule_together_and_no_set_lower_than_half_a_point():
    shipped = {"atcoder_dev": 0.6, "mbxp_dev": 0.99, "algorithms_dev": 0.6, "ports_dev": 0.97}

    def scores(**delta):
        return {k: {"conba": v + delta.get(k, 0.0)} for k, v in shipped.items()}

    assert decide(scores(atcoder_dev=0.02), shipped)["beats"] is True
    assert decide(scores(atcoder_dev=0.05, mbxp_dev=-TOLERANCE - 0.001), shipped)["beats"] is False
    assert decide(scores(atcoder_dev=0.05, mbxp_dev=-TOLERANCE + 0.001), shipped)["beats"] is True
    assert decide(scores(atcoder_dev=0.004, ports_dev=-0.003, algorithms_dev=-0.003), shipped)["beats"] is False
    assert decide(scores(), shipped)["beats"] is False  # equal is not better
    missing = scores(atcoder_dev=0.1)
    del missing["ports_dev"]
    partial = decide(missing, shipped)
    assert partial["beats"] is None and partial["missing"] == ["ports_dev"]
    assert partial["mean_difference"] == pytest.approx(0.1 / 3, abs=1e-6)  # over the sets scored: it ranks the runs
    assert decide({}, shipped)["missing"] == list(shipped)


def test_repository_sets_are_skipped_without_faiss(monkeypatch, tmp_path):
    from conba_research.gpu_train import dev_eval

    monkeypatch.setattr(dev_eval, "repo_eval_available", lambda: False)
    repos = {k: v for k, v in SETS.items() if v[0] == "repo"}
    rows = dev_eval.evaluate_sets(object(), tmp_path, tmp_path, repos, log=lambda m: None)
    assert set(rows) == set(repos) and all("import CKPT OUT --eval" in r["skipped"] for r in rows.values())


def test_plan_same_steps_for_every_variant_and_the_default_fits_its_deadline():
    plan = V.SweepPlan()
    names = [n for n, _, _ in V.runs(plan)]
    assert len(names) == len(set(names)) == len(V.VARIANTS) * 2
    for variant in V.VARIANTS:
        opts = V.train_options(plan, variant, 0)
        assert opts["epochs"] * opts["steps_per_epoch"] == plan.steps and opts["tune"] == "full"
        assert opts["patience"] > opts["epochs"]  # no early stop: every run takes all its steps
    work = sum(V.estimate_seconds(plan, v) for _, v, _ in V.runs(plan)) + plan.eval_seconds
    assert work / plan.parallel < plan.deadline < 570  # ~9 minutes, under the script's 570 s cap
    with pytest.raises(ValueError, match="unknown variant"):
        V.SweepPlan(variants=["mean", "lstm"]).check()


@pytest.fixture(scope="module")
def packed(tiny_backbone, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(data folder, pack folder, reference) for the tiny backbone, the reference a 'tuned' copy of its layers."""
    from conba_research.gpu_train.pack import prepare

    tmp = tmp_path_factory.mktemp("gpu-train")
    data = make_shared_data(tmp / "data")
    state = read_tensors(tiny_backbone / "model.safetensors")
    reference = tmp / "reference.safetensors"
    write_tensors(reference, {k: (v * 1.02).half() for k, v in state.items() if k.startswith("encoder.")})
    prepare(data, tmp / "pack", tiny_backbone, reference, view="code+docs", log=lambda m: None)
    return data, tmp / "pack", reference


@pytest.mark.slow
def test_prepare_and_unpack_rebuild_the_float16_base_and_the_data(packed, tiny_backbone, tmp_path):
    from conba.encoder.backbone import load_hf
    from conba_research.gpu_train.pack import DATA_SETS, unpack

    data, pack, reference = packed
    info = json.loads((pack / "pack.json").read_text())
    assert info["tokens_kept"] < info["vocabulary"] and info["reference_sha256"]
    base, unpacked = unpack(pack, tmp_path, reference)
    assert all((unpacked / name).exists() for name in DATA_SETS)
    real, half = read_tensors(tiny_backbone / "model.safetensors"), read_tensors(base / "model.safetensors")
    emb = "embeddings.word_embeddings.weight"
    kept = (half[emb] != 0).any(dim=1)
    assert 0 < int(kept.sum()) <= info["tokens_kept"]
    for k, v in real.items():
        expected = v.half() if v.is_floating_point() else v
        if k == emb:
            assert torch.equal(half[k][kept], expected[kept])
        elif k.startswith("pooler."):  # never read by the run
            assert not half[k].any()
        else:
            assert torch.equal(half[k], expected), k
    _, model = load_hf(str(base))
    assert next(model.parameters()).dtype == torch.float32  # float16 on disk, float32 to train
    other = tmp_path / "other.safetensors"
    write_tensors(other, {k: v + 1 for k, v in read_tensors(reference).items()})
    with pytest.raises(UsageError, match="prepare"):
        unpack(pack, tmp_path / "again", other)


@pytest.mark.slow
def test_sweep_end_to_end_tiny_result_json_and_checkpoints(packed, tiny_backbone, tmp_path):
    """2 variants × 1 seed × 2 steps, each run in its own process as on the GPU machine; then the best
    checkpoint comes back as a float16 conba model folder."""
    from conba.model import load_model
    from conba_research.gpu_train.export import import_run
    from conba_research.gpu_train.sweep import main

    data, pack, reference = packed
    out = tmp_path / "out"
    t0 = time.time()
    doc = main(["--base", str(_unpacked_base(pack, tmp_path, reference)), "--data", str(data),
                "--work", str(tmp_path / "work"), "--out", str(out), "--device", "cpu",
                "--variants", "mean,conba-tokens", "--seeds", "0", "--steps", "2", "--checks", "2",
                "--max-length", "64", "--groups-per-batch", "2", "--per-group", "3", "--dev-limit", "0",
                "--parallel", "2", "--deadline", "600", "--workers", "1", "--export", "1",
                "--shipped", str(ROOT / "docs/results/default")])
    seconds = time.time() - t0
    saved = json.loads((out / "gpu_train.json").read_text())
    assert saved == json.loads(json.dumps(doc))
    assert saved["format"] == "conba-gpu-train" and saved["status"] == "done"
    assert set(saved["shipped"]) == set(SETS) and saved["unpacked_token_occurrences"] == 0
    rows = {r["name"]: r for r in saved["runs"]}
    assert set(rows) == {"untuned", "mean-s0", "conba-tokens-s0"}, [r.get("error") for r in saved["runs"]]
    for name, row in rows.items():
        assert row["status"] == "done", row.get("error")
        assert set(row["scores"]) == set(SETS)
        for score in row["scores"].values():
            assert "error" not in score, score
            assert 0.0 <= score["conba"] <= 1.0 and 0.0 <= score["dense"] <= 1.0
        assert isinstance(row["decision"]["beats"], bool)
        if name != "untuned":
            assert row["steps"] == 2 and len(row["checks"]) == 3  # before training and after each check
    assert set(saved["variants"]) == {"mean", "conba-tokens"}
    assert len(saved["best"]) == 1 and saved["exported"] == [f"{saved['best'][0]}.ckpt.tar"]
    assert "| mean-s0 | done | 2 |" in (out / "gpu_train.md").read_text()
    model_dir = tmp_path / "imported"
    result = import_run(out / saved["exported"][0], model_dir, base=str(tiny_backbone))
    assert result["probe_max_difference"] < 5e-3  # float16 rounding of the frozen rows
    model = load_model(str(model_dir))
    assert model.fingerprint() == result["fingerprint"]
    assert json.loads((model_dir / "conba_config.json").read_text())["dtype"] == "float16"
    weights = read_tensors(model_dir / "backbone" / "model.safetensors")
    trained = read_tensors(tmp_path / "work" / "runs" / saved["best"][0] / "backbone" / "model.safetensors")
    assert torch.equal(weights["encoder.layer.0.attention.self.query.weight"],
                       trained["encoder.layer.0.attention.self.query.weight"])
    print(f"tiny sweep: {seconds:.1f}s")


def _unpacked_base(pack: Path, tmp_path: Path, reference: Path) -> Path:
    from conba_research.gpu_train.pack import unpack

    return unpack(pack, tmp_path / "unpacked", reference)[0]


@pytest.mark.slow
def test_every_variant_trains_in_process(packed, tmp_path):
    """ctrl (prefix codes), the ConbaLayer ablations and conba-scan take their steps (no evaluation)."""
    from conba_research.gpu_train.sweep import main

    data, pack, reference = packed
    doc = main(["--base", str(_unpacked_base(pack, tmp_path, reference)), "--data", str(data),
                "--work", str(tmp_path / "work"), "--out", str(tmp_path / "out"), "--device", "cpu", "--in-process",
                "--variants", ",".join(V.VARIANTS), "--seeds", "1", "--steps", "1", "--checks", "1",
                "--max-length", "64", "--groups-per-batch", "2", "--per-group", "3", "--dev-limit", "0",
                "--sets", "", "--export", "0", "--workers", "1", "--shipped", str(ROOT / "docs/results/default")])
    rows = {r["name"]: r for r in doc["runs"]}
    assert set(rows) == {"untuned", *(f"{v}-s1" for v in V.VARIANTS)}
    for name, row in rows.items():
        assert row["status"] == "done", (name, row.get("error"))
        assert row["scores"] == {} and row["decision"] == {"beats": None, "missing": list(SETS)}
        if name != "untuned":
            assert row["steps"] == 1


@pytest.mark.slow
def test_deadline_skips_runs_and_still_writes_the_results(packed, tmp_path):
    from conba_research.gpu_train.sweep import main

    data, pack, reference = packed
    out = tmp_path / "out"
    doc = main(["--base", str(_unpacked_base(pack, tmp_path, reference)), "--data", str(data),
                "--work", str(tmp_path / "work"), "--out", str(out), "--device", "cpu", "--in-process",
                "--variants", "mean", "--seeds", "0,1", "--deadline", "0", "--workers", "1",
                "--shipped", str(ROOT / "docs/results/default")])
    assert [r["status"] for r in doc["runs"]] == ["skipped"] * 3
    assert all("deadline" in r["error"] for r in doc["runs"])
    assert json.loads((out / "gpu_train.json").read_text())["status"] == "done"
    assert doc["best"] == [] and doc["exported"] == []


def test_script_parses_and_shows_its_usage():
    script = ROOT / "scripts" / "gpu_train.sh"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    res = subprocess.run(["bash", str(script), "nonsense"], capture_output=True, text=True)
    assert res.returncode == 2 and "usage: scripts/gpu_train.sh prepare" in res.stderr
