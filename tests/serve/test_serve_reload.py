"""Index reload in `conba serve`: a search while `conba index` rewrites the index reads the previous
snapshot whole (no torn reads), and the new one is swapped in once the writer has finished."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from conba.serve.reload import IndexHolder

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"
QUERY = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
NEW_CODE = "".join(f"def brand_new_{i}(xs):\n    return [x * {i} for x in xs if x > {i}]\n\n" for i in range(6))


def _hits(holder: IndexHolder, k: int = 51) -> list[tuple[int, str, str, int]]:
    query = holder.model.encode([QUERY], languages=["python"])
    hits = holder.snapshot.index.search_vectors(query, k=k)[0]
    return [(h.unit.id, h.unit.qualname, h.unit.code, round(h.score * 1e4)) for h in hits]


@pytest.fixture()
def project(tmp_path, tiny_model):
    from conba.index import Index

    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([proj])
    return proj, tmp_path / "idx"


@pytest.mark.slow
def test_search_during_reindex_reads_the_old_snapshot_whole(project, tiny_model):
    from conba.index import Index
    from conba.index.storage.builder import encode_missing
    from conba.model import load_model

    proj, folder = project
    holder = IndexHolder(folder, load_model(tiny_model))
    assert holder.refresh() and holder.snapshot.generation == 1
    before = _hits(holder)
    assert len(before) == 51

    victim = next(p for p in sorted(proj.rglob("*.py")))  # its units are deleted and replaced by the writer
    victim.write_text(NEW_CODE)
    (proj / "cpp").exists() and shutil.rmtree(proj / "cpp")
    midway, release = threading.Event(), threading.Event()

    def slow_encoder(*args, **kwargs):  # the writer has rewritten the tables and holds the lock here
        midway.set()
        assert release.wait(60)
        encode_missing(*args, **kwargs)

    def write():
        with Index(folder, model=tiny_model) as idx:
            idx.add([proj], encoder=slow_encoder)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert midway.wait(60)
        assert not holder.refresh()                  # the manifest is unchanged so far
        manifest = folder / "manifest.json"
        manifest.write_text(manifest.read_text())    # even if it changed: a writer holds the lock
        assert not holder.refresh() and "is updating the index" in holder.error
        assert _hits(holder) == before               # every old row is still there: nothing torn
    finally:
        release.set()
        writer.join(60)
    assert holder.snapshot.generation == 1 and _hits(holder) == before
    assert holder.refresh() and holder.snapshot.generation == 2
    after = _hits(holder)
    names = {name for _, name, _, _ in after}
    assert any(n.startswith("brand_new_") for n in names) and len(after) == len(holder.snapshot.index)
    assert not any(f.endswith(".cpp") for f in holder.snapshot.facts["languages"])
    assert "cpp" not in holder.snapshot.facts["languages"]
    assert not holder.refresh()                      # nothing changed since
    holder.close_now()


@pytest.mark.slow
def test_manifest_rewritten_while_loading_is_retried(project, tiny_model, monkeypatch):
    import conba.serve.reload as reload
    from conba.model import load_model

    _, folder = project
    holder = IndexHolder(folder, load_model(tiny_model))
    stamps = iter([(1, 1, 1), (2, 2, 2)])  # the manifest "changes" between the two looks
    monkeypatch.setattr(reload, "_stamp", lambda path: next(stamps))
    assert not holder.refresh() and holder.snapshot is None
    monkeypatch.undo()
    assert holder.refresh() and holder.snapshot.generation == 1
    holder.close_now()


@pytest.mark.slow
def test_model_mismatch_keeps_serving_and_says_why(project, tiny_model, tiny_backbone, tmp_path):
    from conba.model import ConbaModel, load_model

    _, folder = project
    holder = IndexHolder(folder, load_model(tiny_model))
    assert holder.refresh()
    other = ConbaModel.create(str(tiny_backbone), max_length=32).save(tmp_path / "other")
    holder.model = load_model(str(other))
    (folder / "manifest.json").write_text((folder / "manifest.json").read_text())  # looks re-indexed
    assert not holder.refresh() and "was built with model" in holder.error
    assert holder.snapshot.generation == 1
    holder.close_now()
