"""The noise-robustness experiment on tiny data: outputs, numbers, caching/resume, bad input."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from conba.data import load_grouped
from conba_research.noise import run_noise


class HashModel:
    """A deterministic bag-of-tokens encoder (no torch), counting how many snippets it encoded."""

    def __init__(self, threshold: float | None = 0.5, dim: int = 64):
        self.threshold = threshold
        self.encoded = 0
        self.dim = dim

    def encode(self, codes, languages=None, batch_size=32, show_progress_bar=None):
        self.encoded += len(codes)
        out = np.zeros((len(codes), self.dim), dtype=np.float32)
        for k, code in enumerate(codes):
            for tok in code.replace("(", " ").replace(")", " ").split():
                out[k, int(hashlib.md5(tok.encode()).hexdigest(), 16) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONBA_CACHE", str(tmp_path / "cache"))


@pytest.fixture()
def records(tmp_path):
    from helpers import make_tiny_dataset

    return load_grouped(make_tiny_dataset(tmp_path / "d.jsonl", copies=2))


@pytest.mark.slow
def test_run_noise_writes_json_png_markdown_and_curves(records, tmp_path):
    model = HashModel()
    out = tmp_path / "noise"
    res = run_noise(model, records, out, levels=(0.2, 0.5), progress=False, data_name="tiny")
    for name in ("noise.json", "noise.png", "noise.md"):
        assert (out / name).stat().st_size > 0
    assert sorted(p.name for p in out.iterdir()) == ["noise.json", "noise.md", "noise.png"]  # cache lives elsewhere
    saved = json.loads((out / "noise.json").read_text())
    assert saved["levels"] == [0.0, 0.2, 0.5] and set(saved["results"]) == {"synonym", "insertion", "swap", "deletion"}
    base = {k: rows[0]["map_at_r"] for k, rows in res["results"].items()}
    assert len(set(base.values())) == 1  # level 0 is the same clean baseline everywhere
    for kind, rows in res["results"].items():
        assert [r["level"] for r in rows] == [0.0, 0.2, 0.5]
        for r in rows:
            assert 0.0 <= r["map_at_r"] <= 1.0 and 0.0 <= r["f1"] <= 1.0
        assert rows[2]["applied_fraction"] > 0 or kind == "swap", kind  # tiny bodies: little to swap
    deletion = res["results"]["deletion"]
    assert deletion[2]["applied_fraction"] == pytest.approx(0.5, abs=0.1)
    assert deletion[2]["map_at_r"] < deletion[0]["map_at_r"]  # a bag-of-tokens model must notice deletions
    assert res["threshold_source"] == "stored with the model"
    for kind in ("synonym", "insertion", "swap"):
        assert all(r["parse_kept"] in (None, 1.0) for r in res["results"][kind][1:])
    md = (out / "noise.md").read_text()
    assert "noise.png" in md and "MAP@R" in md and "F1" in md


class PrintedHashModel(HashModel):
    def fingerprint(self) -> str:
        return f"hash{self.dim}"


@pytest.mark.slow
def test_run_noise_resumes_from_its_cache_and_only_encodes_changed_snippets(records, tmp_path):
    model = PrintedHashModel(threshold=None)
    first = run_noise(model, records, tmp_path / "n", perturbations=("swap",), levels=(0.1,), progress=False)
    assert model.encoded < 2 * len(records)  # unchanged snippets reuse the clean embeddings
    assert first["threshold_source"].startswith("best F1 on the clean pairs")
    again = PrintedHashModel(threshold=None)
    second = run_noise(again, records, tmp_path / "n", perturbations=("swap",), levels=(0.1,), progress=False)
    assert again.encoded == 0 and second["results"] == first["results"]
    other = PrintedHashModel(threshold=None, dim=16)  # another fingerprint: its own cache
    run_noise(other, records, tmp_path / "n", perturbations=("swap",), levels=(0.1,), progress=False)
    assert other.encoded > 0


@pytest.mark.slow
def test_models_without_a_fingerprint_never_share_a_cache(records, tmp_path):
    a, b = HashModel(dim=64), HashModel(dim=8)
    ra = run_noise(a, records, tmp_path / "a", perturbations=("deletion",), levels=(0.5,), progress=False)
    rb = run_noise(b, records, tmp_path / "b", perturbations=("deletion",), levels=(0.5,), progress=False)
    assert a.encoded > 0 and b.encoded > 0
    assert ra["results"]["deletion"][0]["map_at_r"] != rb["results"]["deletion"][0]["map_at_r"]


@pytest.mark.slow
def test_run_noise_with_a_tiny_conba_model(records, tmp_path, tiny_backbone):
    from conba.model import ConbaModel

    model = ConbaModel.create(str(tiny_backbone))
    res = run_noise(model, records, tmp_path / "m", perturbations=("synonym", "deletion"), levels=(0.5,),
                    progress=False, quick=True)
    assert res["n_records"] == len(records) and res["results"]["synonym"][1]["changed_records"] > 0


def test_run_noise_bad_input(records, tmp_path):
    with pytest.raises(ValueError, match="unknown perturbation"):
        run_noise(HashModel(), records, tmp_path, perturbations=("blur",), progress=False)
    with pytest.raises(ValueError, match="levels"):
        run_noise(HashModel(), records, tmp_path, levels=(0.0,), progress=False)
    with pytest.raises(ValueError, match="levels"):
        run_noise(HashModel(), records, tmp_path, levels=(1.5,), progress=False)
    with pytest.raises(ValueError, match="2 languages"):
        run_noise(HashModel(), [r for r in records if r.language == "python"], tmp_path, progress=False)
    one_group = [r for r in records if r.group == records[0].group]  # clones, but nothing that is not one
    with pytest.raises(ValueError, match="d.jsonl: no cross-language clone / not-clone pairs"):
        run_noise(HashModel(), one_group, tmp_path, progress=False, data_name="d.jsonl")


def test_parallel_perturbation_matches_serial(tmp_path):
    from conba_research.noise import perturb_all
    from helpers import make_tiny_dataset

    recs = load_grouped(make_tiny_dataset(tmp_path / "big.jsonl", copies=7))
    assert len(recs) > 64
    assert perturb_all(recs, "deletion", 0.3, 0, workers=2) == perturb_all(recs, "deletion", 0.3, 0, workers=1)
