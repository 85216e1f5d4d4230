"""An index re-extracts every file, changed or not, when the extractor's output changed since it was
built (``EXTRACTOR_VERSION``): a file whose size and mtime did not change is otherwise kept as it was
cut, and would keep e.g. its Rust units without their ``///`` docs."""

from __future__ import annotations

from pathlib import Path

from conba.index.storage import builder
from conba.index.storage.store import Store
from conba.source.records import AddReport


def _scan(store: Store, root: Path) -> AddReport:
    report = AddReport()
    builder.scan(store, [root], report)
    builder.commit(store)  # the staged changes replace the index's rows (conba.index.storage.staging)
    return report


def test_a_new_extractor_version_re_extracts_unchanged_files(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.rs").write_text("/// Adds one.\nfn inc(x: i32) -> i32 {\n    x + 1\n}\n")
    (root / "b.py").write_text("def f(x):\n    return x + 1\n")
    store = Store(tmp_path / "index.sqlite")
    assert _scan(store, root).files_changed == 2
    assert store.get_meta("extractor") == str(builder.EXTRACTOR_VERSION)
    assert _scan(store, root).files_changed == 0  # nothing changed: nothing re-extracted
    monkeypatch.setattr(builder, "EXTRACTOR_VERSION", builder.EXTRACTOR_VERSION + 1)
    assert _scan(store, root).files_changed == 2
    assert store.get_meta("extractor") == str(builder.EXTRACTOR_VERSION)
    assert _scan(store, root).files_changed == 0
    store.set_meta(extractor=None)  # an index built before the version was recorded
    assert _scan(store, root).files_changed == 2
