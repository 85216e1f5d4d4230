"""`conba index --watch` (conba.index.storage.watch): events filtered to what can change the index, failed updates
reported without stopping, and (slow) a watcher that sees edits, new and deleted files in search results within 3 s, one
update per burst of saves, and Ctrl-C in the middle of an update leaving an index `conba clones` reads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import write_tree

ROOT = Path(__file__).resolve().parents[2]
TREE = {"a/mathlib.py": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
        "a/Util.java": "class Util {\n    static int twice(int x) {\n        return 2 * x;\n    }\n}\n",
        "b/algo.go": "package b\n\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n"
                     "\treturn s\n}\n"}


def test_the_filter_keeps_source_files_and_folders_and_drops_the_index_and_vcs(tmp_path):
    from watchfiles import Change

    from conba.index.storage.watch import SourceFilter

    (tmp_path / "pkg").mkdir()
    keep = SourceFilter(tmp_path / ".conba-index")
    assert keep(Change.modified, str(tmp_path / "a.py")) and keep(Change.added, str(tmp_path / "B.java"))
    assert keep(Change.deleted, str(tmp_path / "gone_folder")) and keep(Change.added, str(tmp_path / "pkg"))
    assert keep(Change.modified, str(tmp_path / ".gitignore"))
    assert not keep(Change.modified, str(tmp_path / ".conba-index" / "index.sqlite"))
    assert not keep(Change.modified, str(tmp_path / ".git" / "index"))
    assert not keep(Change.modified, str(tmp_path / "node_modules" / "x.js"))
    assert not keep(Change.modified, str(tmp_path / "notes.txt")) and not keep(Change.added, str(tmp_path / "a.pyc"))


def test_a_failed_update_is_reported_and_watching_goes_on(tmp_path):
    from conba.index.errors import SourceError
    from conba.index.storage.watch import Watcher

    class Failing:
        path = tmp_path / "idx"

        def add(self, paths, **kw):
            raise SourceError(f"{paths[0]}: no source files found")

    seen = []
    w = Watcher(Failing(), [tmp_path], on_update=lambda report, error: seen.append((report, error)))
    w._update_and_report()
    assert seen == [(None, f"{os.path.realpath(tmp_path)}: no source files found")]
    assert w.state.updates == 1 and w.state.last_error and not w.state.running


def test_watch_is_refused_with_rebuild_and_without_paths_to_watch(tmp_path):
    from click.testing import CliRunner

    from conba.cli.main import cli

    result = CliRunner().invoke(cli, ["index", str(tmp_path), "--watch", "--rebuild", "-i", str(tmp_path / "i")])
    assert result.exit_code == 2 and "--watch goes without --rebuild" in result.output


def _top(idx, code: str) -> str:
    hits = idx.search(code, k=1)
    return hits[0].unit.qualname if hits else ""


def _until(check, timeout: float) -> float:
    t0 = time.monotonic()
    while not check():
        assert time.monotonic() - t0 < timeout, f"not seen within {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - t0


@pytest.mark.slow
def test_edits_new_and_deleted_files_are_searchable_within_3_s_and_a_burst_is_one_update(tmp_path, tiny_model):
    from conba.index import Index, IndexBusyError
    from conba.index.storage.watch import Watcher
    from conba.model import load_model

    tree = write_tree(tmp_path / "proj", TREE)
    folder = tmp_path / "idx"
    writer_model = load_model(tiny_model)
    with Index(folder, model=writer_model) as first:
        first.add([tree])
    reader_model = load_model(tiny_model)  # its own tokenizer: the watcher encodes in another thread
    w = Watcher(lambda: Index(folder, model=writer_model), [tree])
    thread = threading.Thread(target=w.run, daemon=True)
    thread.start()
    assert w.ready.wait(10)
    try:
        def searchable(code: str, name: str, present: bool = True):
            def check() -> bool:  # a reader in the moment the update swaps its rows in is told to retry
                try:
                    with Index(folder, model=reader_model, create=False) as idx:
                        names = {u.qualname for u in idx.units()}
                        return (name in names and _top(idx, code) == name) if present else name not in names
                except IndexBusyError:
                    return False
            return check

        edited = "def lcm_of(a, b):\n    return a * b // gcd_plain(a, b) + 17\n"
        (tree / "a" / "mathlib.py").write_text(TREE["a/mathlib.py"] + "\n\n" + edited, encoding="utf-8")
        seconds = [_until(searchable(edited, "lcm_of"), 3)]
        added = "function brandNew(xs) {\n  return xs.filter(x => x > 3).map(x => x * 7);\n}\n"
        (tree / "b" / "new.js").write_text(added, encoding="utf-8")
        seconds.append(_until(searchable(added, "brandNew"), 3))
        (tree / "a" / "Util.java").unlink()
        seconds.append(_until(searchable("", "Util.twice", present=False), 3))
        before = w.state.updates
        for i in range(50):  # an editor saving the same file 50 times, 10 ms apart
            (tree / "b" / "new.js").write_text(added.replace("7", str(i + 8)), encoding="utf-8")
            time.sleep(0.01)
        last = added.replace("7", "57")
        _until(searchable(last, "brandNew"), 5)
        _until(lambda: not w.state.running, 5)
        assert w.state.updates - before <= 3, w.state.updates - before
    finally:
        w.stop()
        thread.join(10)
    assert max(seconds) < 3 and not thread.is_alive()


@pytest.mark.slow
def test_ctrl_c_during_an_update_finishes_it_and_leaves_an_index_clones_reads(tmp_path, tiny_model):
    tree = write_tree(tmp_path / "proj", TREE)
    folder = tmp_path / "idx"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CONBA_INDEX_TEST_DELAY="2", CONBA_INDEX_COMMIT_EVERY="1",
               TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-m", "conba.cli.main", "index", str(tree), "-i", str(folder), "-m", tiny_model, "--watch"]
    from conba.index import Index

    with Index(folder, model=tiny_model) as idx:  # indexed already: the watching process's first run encodes nothing
        idx.add([tree])
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("watching"):
                break
        (tree / "b" / "more.py").write_text("def tripled(xs):\n    return [x * 3 for x in xs]\n\n"
                                            "def quadrupled(xs):\n    return [x * 4 for x in xs]\n", encoding="utf-8")
        for line in proc.stderr:
            lines.append(line)
            if "changes: updating" in line:
                break
        time.sleep(0.5)  # inside the update: encoding sleeps 2 s after each function
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = "".join(lines) + err
    assert proc.returncode == 0, err
    assert "stopping after this update" in err and "the index is complete" in err
    assert "updated: 1 files changed, 2 functions encoded" in out
    clones = subprocess.run([sys.executable, "-m", "conba.cli.main", "clones", "-i", str(folder), "-t", "0.5"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert clones.returncode == 0, clones.stderr
    with Index(folder, create=False) as idx:
        assert {"tripled", "quadrupled", "gcd"} <= {u.qualname for u in idx.units()}


@pytest.mark.slow
def test_a_branch_switch_leaves_the_index_as_the_checked_out_tree(tmp_path, tiny_model):
    from conba.index import Index, IndexBusyError
    from conba.index.storage.watch import Watcher
    from conba.model import load_model

    tree = write_tree(tmp_path / "proj", TREE)
    git = ["git", "-C", str(tree), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "one"], ["checkout", "-qb", "other"]):
        subprocess.run([*git, *args], check=True)
    (tree / "a" / "Util.java").unlink()
    write_tree(tree, {"b/extra.py": "def only_on_other(x):\n    return x * 5 - 1\n",
                      "a/mathlib.py": "def lcm(a, b):\n    return a * b // 7\n"})
    for args in (["add", "-A"], ["commit", "-qm", "two"], ["checkout", "-q", "main"]):
        subprocess.run([*git, *args], check=True)
    model = load_model(tiny_model)
    folder = tmp_path / "idx"
    with Index(folder, model=model) as idx:
        idx.add([tree])
    w = Watcher(lambda: Index(folder, model=model), [tree])
    thread = threading.Thread(target=w.run, daemon=True)
    thread.start()
    assert w.ready.wait(10)

    def names() -> set[str]:
        try:
            with Index(folder, create=False) as idx:
                return {u.qualname for u in idx.units()}
        except IndexBusyError:
            return set()

    try:
        subprocess.run([*git, "checkout", "-q", "other"], check=True)
        _until(lambda: names() == {"lcm", "Sum", "only_on_other"}, 10)
        subprocess.run([*git, "checkout", "-q", "main"], check=True)
        _until(lambda: names() == {"gcd", "Util.twice", "Sum"}, 10)
        _until(lambda: not w.state.running, 5)
    finally:
        w.stop()
        thread.join(10)
    assert w.state.updates <= 4 and w.state.last_error is None
