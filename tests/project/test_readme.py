"""The README runs: every shell and Python block of README.md, on a copy of examples/polyglot, prints what it shows.

Generic: whatever blocks the README has are run, in order, in one temporary folder holding a copy of
``examples/polyglot`` (never in the repository), with ``conba`` on PATH being this tree's CLI. A ``text`` block
right after a code block is that block's output as the README shows it. Only blocks preceded by the marker
``<!-- readme-test: skip (...) -->`` are skipped: the two set-up commands of "Set-up on a fresh machine",
which create ``.venv`` and which CI runs itself (.ci/run).

Tiers: the fast tier checks the blocks without running a model (every ``conba`` call parses: its command and
options exist; Python blocks compile); the slow tier runs them all with a tiny model (``CONBA_MODEL``: every
block exits 0) and with the shipped model, where each shown output line must match a printed one: the same
words, numbers masked, scores (numbers in [-1, 1] with 3-4 decimals) within 0.01, ``...`` standing for any text.

    python tests/project/test_readme.py        # run the blocks with the shipped model and print what each printed
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SKIP = "<!-- readme-test: skip"
SETUP = "## Set-up on a fresh machine"
RUNS = {"bash", "sh", "python"}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
SCORE = re.compile(r"-?[01]\.\d{3,4}\b")


@dataclass
class Block:
    lang: str
    code: str
    line: int               # the README line of its opening fence
    skip: bool              # behind the skip marker
    section: str            # the heading it is under
    output: str | None      # the text block right after it (what the README says it prints)


def readme_blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text`` that run (bash, sh, python), each with its marker, section and output."""
    found = list(FENCE.finditer(text))
    out: list[Block] = []
    for i, m in enumerate(found):
        if m.group(1) not in RUNS:
            continue
        before = text[:m.start()]
        heading = re.findall(r"^#{1,6} .+$", before, re.M)
        last_line = before.rstrip("\n").rsplit("\n", 1)[-1]
        nxt = found[i + 1] if i + 1 < len(found) else None
        output = nxt.group(2) if nxt and nxt.group(1) == "text" and nxt.start() == m.end() else None
        out.append(Block(m.group(1), m.group(2), before.count("\n") + 1, last_line.startswith(SKIP),
                         heading[-1] if heading else "", output))
    return out


def logical_lines(code: str) -> list[str]:
    """A shell block's commands: lines joined where a quote is still open or a line ends with a backslash."""
    out, buf = [], ""
    for line in code.splitlines():
        buf += line + "\n"
        if buf.endswith("\\\n"):
            continue
        try:
            shlex.split(buf, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        out.append(buf)
        buf = ""
    return out + ([buf] if buf.strip() else [])


def conba_calls(code: str) -> list[list[str]]:
    """The arguments of every ``conba ...`` call in a shell block (up to a pipe, redirection, ``&`` or ``;``)."""
    calls = []
    for line in logical_lines(code):
        lexer = shlex.shlex(line.replace("\\\n", " "), posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, "#"
        current = None
        for token in lexer:
            if token == "conba" and current is None:
                current = []
            elif current is not None and set(token) <= set("|&;<>()"):
                calls.append(current)
                current = None
            elif current is not None:
                current.append(token)
        if current is not None:
            calls.append(current)
    return calls


def example_copy(where: Path) -> Path:
    """A folder holding ``examples/`` (copied: polyglot, assignment) and ``bin/conba`` (this tree's CLI)."""
    shutil.copytree(ROOT / "examples", where / "examples")
    bin_dir = where / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "conba"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m conba.cli.main "$@"\n')
    shim.chmod(0o755)
    return where


def run_block(block: Block, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """Run one block in ``cwd``; its whole process group is ended afterwards (a server it left in the background)."""
    argv = ["bash", "-e", "-o", "pipefail", "-c", block.code] if block.lang != "python" else \
        [sys.executable, "-c", block.code]
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return subprocess.CompletedProcess(argv, 124, out + f"\n(timed out after {timeout:.0f} s)")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(argv, proc.returncode, out)


def block_env(where: Path, model: str | None) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{where / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)}
    for name in ("CONBA_MODEL", "CONBA_INDEX", "CONBA_TOKEN"):  # the README's defaults, not the caller's
        env.pop(name, None)
    if model:
        env["CONBA_MODEL"] = model
    return env


def _mask(line: str) -> str:
    return re.sub(r"\d+(?:\.\d+)?", "#", " ".join(line.split()))


def line_matches(shown: str, printed: str) -> bool:
    """``printed`` holds ``shown``'s words (numbers masked; ``...``: any text) and its scores within 0.01."""
    parts = [re.escape(_mask(p)) for p in shown.split("...")]
    if not re.search(".*".join(parts), _mask(printed)):
        return False
    want, got = SCORE.findall(shown), SCORE.findall(printed)
    return len(want) == len(got) and all(abs(float(a) - float(b)) <= 0.01 for a, b in zip(want, got)) \
        if "..." not in shown else all(any(abs(float(a) - float(b)) <= 0.01 for b in got) for a in want)


def missing_lines(shown: str, printed: str) -> list[str]:
    """The lines of the README's output block that no printed line matches."""
    lines = printed.splitlines()
    return [s for s in shown.splitlines() if s.strip() and not any(line_matches(s, p) for p in lines)]


def run_readme(where: Path, model: str | None, timeout: float = 900) -> list[tuple[Block, subprocess.CompletedProcess]]:
    example_copy(where)
    env = block_env(where, model)
    return [(b, run_block(b, where, env, timeout)) for b in readme_blocks(README.read_text(encoding="utf-8"))
            if not b.skip]


# ------------------------------------------------------------------------------------------------ fast tier
def test_the_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, "README.md: at most 150 lines; the rest belongs in docs/"
    blocks = readme_blocks(text)
    assert len([b for b in blocks if not b.skip]) >= 6


def test_only_the_two_setup_commands_are_skipped_and_ci_runs_them():
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    skipped = [b for b in blocks if b.skip]
    assert len(skipped) == 2 and all(b.section == SETUP for b in skipped)
    assert all(b.code.startswith("python3 -m venv .venv && ") for b in skipped)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install -q -e ".[dev]"' in ci and '.venv/bin/python -m pytest -q -m "" --durations=20' in ci
    assert 'pytest -q -m "" --durations=20' in skipped[1].code and '-e ".[dev]" -e research/' in skipped[1].code
    assert '-e ".[dev]" -e research/' in ci  # the README's test command installs what CI installs


def test_the_block_finder():
    text = ("# t\n\n## S\n\n" + SKIP + " (x) -->\n```bash\nsetup\n```\n\n```bash\nconba a -k 1 | head\n```\n"
            "```text\nout\n```\n\n```python\nprint(1)\n```\n\n```toml\nx = 1\n```\n")
    blocks = readme_blocks(text)
    assert [(b.lang, b.skip, b.section, b.output) for b in blocks] == [
        ("bash", True, "## S", None), ("bash", False, "## S", "out\n"), ("python", False, "## S", None)]
    assert conba_calls("conba a 'x y' -k 1 | head\nconba b > f && conba c &\n# conba d\n") == [
        ["a", "x y", "-k", "1"], ["b"], ["c"]]


def test_the_output_check():
    assert line_matches("  1. 0.844  a.py:4-8  [python]  gcd", "  1. 0.848  a.py:4-8  [python]  gcd")
    assert not line_matches("  1. 0.844  a.py:4-8  [python]  gcd", "  1. 0.870  a.py:4-8  [python]  gcd")
    assert not line_matches("  1. 0.844  a.py:4-8  [python]  gcd", "  1. 0.844  b.py:4-8  [python]  gcd")
    assert line_matches("Indexed 51 functions in 44.1 s", "Indexed 51 functions in 3.0 s")
    assert line_matches('{"hits":[{"score":0.7879,"id":7,...}],"generation":1}',
                        '{"hits":[{"score":0.788,"id":7,"file":"x"}],"generation":1}')
    assert missing_lines("a 1\n\nb 2\n", "b 3\nc\n") == ["a 1"]


def test_every_conba_call_in_the_readme_parses(tmp_path, monkeypatch):
    """Each call's command exists and its options and values parse (click, nothing run, no model loaded)."""
    import click

    from conba.cli.main import cli

    monkeypatch.chdir(example_copy(tmp_path))
    calls = [c for b in readme_blocks(README.read_text(encoding="utf-8")) if b.lang != "python" and not b.skip
             for c in conba_calls(b.code)]
    assert len(calls) >= 6
    for args in calls:
        name, rest = args[0], args[1:]
        command = cli.get_command(click.Context(cli), name)
        assert command is not None, f"README: conba {name}: no such command"
        try:
            command.make_context(name, list(rest))
        except click.UsageError as exc:
            pytest.fail(f"README: conba {' '.join(args)}: {exc.format_message()}")


def test_python_blocks_compile():
    for b in readme_blocks(README.read_text(encoding="utf-8")):
        if b.lang == "python":
            compile(b.code, f"README.md:{b.line}", "exec")


# ------------------------------------------------------------------------------------------------ slow tier
@pytest.mark.slow
def test_every_readme_block_runs_with_a_tiny_model(tmp_path, tiny_model):
    for block, done in run_readme(tmp_path, tiny_model):
        assert done.returncode == 0, f"README.md:{block.line} ({block.lang}) exited {done.returncode}:\n{done.stdout}"


@pytest.mark.slow
def test_every_readme_block_prints_what_the_readme_shows(tmp_path):
    for block, done in run_readme(tmp_path, None):
        assert done.returncode == 0, f"README.md:{block.line} ({block.lang}) exited {done.returncode}:\n{done.stdout}"
        if block.output is not None:
            missing = missing_lines(block.output, done.stdout)
            assert not missing, (f"README.md:{block.line}: the output shown is not what it prints; missing:\n"
                                 + "\n".join(missing) + "\nprinted:\n" + done.stdout)


if __name__ == "__main__":  # what each block prints with the shipped model, to update the README's outputs
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for block, done in run_readme(Path(folder), None):
            print(f"=== README.md:{block.line} exit {done.returncode}\n{done.stdout}", flush=True)
