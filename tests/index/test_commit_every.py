"""``CONBA_INDEX_COMMIT_EVERY``: read in one place (conba.index.defaults.commit_every) for the builder, the
long-input upgrade and the Ray encoder; a bad value is one line, not a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.errors import ConfigError
from conba.index.defaults import COMMIT_EVERY, commit_every


def test_the_argument_then_the_variable_then_the_default(monkeypatch):
    monkeypatch.delenv("CONBA_INDEX_COMMIT_EVERY", raising=False)
    assert commit_every() == COMMIT_EVERY == 256
    monkeypatch.setenv("CONBA_INDEX_COMMIT_EVERY", " 7 ")
    assert commit_every() == 7 and commit_every(3) == 3


@pytest.mark.parametrize("value", ["0", "-2", "ten", "2.5"])
def test_a_bad_value_is_one_line(monkeypatch, value):
    monkeypatch.setenv("CONBA_INDEX_COMMIT_EVERY", value)
    with pytest.raises(ConfigError, match="CONBA_INDEX_COMMIT_EVERY"):
        commit_every()


def test_conba_index_reports_a_bad_value_in_one_line(monkeypatch, tmp_path, tiny_model):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    monkeypatch.setenv("CONBA_INDEX_COMMIT_EVERY", "ten")
    res = CliRunner().invoke(cli, ["index", str(tmp_path / "src"), "-i", str(tmp_path / "idx"), "-m", tiny_model])
    assert res.exit_code != 0 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if "CONBA_INDEX_COMMIT_EVERY" in x]
    assert line.startswith("Error:"), res.output
