"""conba bench ivf-real (conba_research.bench.ivf_real): recall of real vectors by size and lists probed, and the padded
index built from the data phase's vectors, on a tiny clustered set."""

from __future__ import annotations

import json
import sys

import pytest

from conba_research.bench import ivf, ivf_real
from helpers import write_clustered_chunks

pytest.importorskip("faiss")


def _run(monkeypatch, main, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["conba bench x", *args])
    main()


@pytest.mark.slow
def test_realscale_and_padded_record_recall(tmp_path, monkeypatch):
    real = write_clustered_chunks(tmp_path / "real", 500)
    out = tmp_path / "bench"
    _run(monkeypatch, ivf_real.main, "--phase", "realscale", "--real", str(real), "--out", str(out),
         "--components", "4", "--min-size", "200", "--nprobe", "1", "4", "128")
    result = json.loads((out / "realscale.json").read_text())
    assert result["real_vectors"] == 1000
    rows = result["rows"]
    assert {r["n"] for r in rows} == {750, 375, 200} and {r["vectors"] for r in rows} == {"real", "synthetic"}
    assert all(r["nprobe"] <= r["nlist"] and 0 <= r["recall@10"] <= 1 for r in rows)
    full = [r for r in rows if r["vectors"] == "real" and r["n"] == 750 and r["lists"] == "4*sqrt(n)"]
    assert full[-1]["share"] == 1.0 and full[-1]["recall@10"] >= 0.99  # every list probed: exact up to float16 ties
    assert full[0]["recall@10"] < full[-1]["recall@10"]
    fit = result["extrapolated"]["real_share_1/64"]  # 64 lists at n 200 and 375, one probed
    assert [n for n, _ in fit["measured"]] == [200, 375] and 0 <= fit["recall_at_1000000"] <= 1
    _run(monkeypatch, ivf.main, "--phase", "data", "--real", str(real), "--out", str(out), "-n", "3000",
         "--queries", "20", "--components", "4")
    _run(monkeypatch, ivf_real.main, "--phase", "padded", "--out", str(out), "--nprobe", "1", "64")
    padded = json.loads((out / "padded.json").read_text())
    assert padded["n"] == 3000 and padded["real"] == 990 and padded["synthetic"] == 2010
    one, all_lists = padded["rows"]
    assert padded["nlist"] == 64 and all_lists["recall@10"] >= 0.99 and one["recall@10"] < all_lists["recall@10"]
    assert 0 < padded["real_share_of_real_queries_truth"] <= 1
    assert all_lists["recall_real_queries_real_neighbours"] >= 0.99
