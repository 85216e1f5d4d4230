"""The user guide builds with warnings as errors (a broken link, a missing anchor, a page left out of the nav all
fail), offline, and its generated pages hold every command of the CLI and every endpoint of the server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_user_guide_builds_strictly_with_every_command_and_endpoint(tmp_path):
    pytest.importorskip("mkdocs", reason="the user guide needs pip install 'conba[docs]'")
    pytest.importorskip("mkdocs_click", reason="the user guide needs pip install 'conba[docs]'")
    import click

    from conba.cli.main import cli
    from conba.serve.describe import schema_app

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH"))
                                                        if p), "NO_PROXY": "*", "HTTP_PROXY": "http://0.0.0.0:9",
           "HTTPS_PROXY": "http://0.0.0.0:9"}  # no network: a fetch would fail the build
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = (site / "cli-reference" / "index.html").read_text(encoding="utf-8")
    ctx = click.Context(cli)
    commands = cli.list_commands(ctx)
    assert len(commands) >= 15
    missing = [name for name in commands if f'id="conba-{name}"' not in reference]
    assert not missing, f"the command reference lacks {missing}"
    api = (site / "http-api" / "index.html").read_text(encoding="utf-8")
    paths = [f"{m.upper()} {p}" for p, ops in schema_app().openapi()["paths"].items() for m in ops]
    assert [p for p in paths if p not in api] == []
    assert "result_language" in api and "<!-- conba: generated" not in api
