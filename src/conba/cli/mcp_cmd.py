"""``conba mcp``: an MCP server (stdio, or the SDK's streamable HTTP) over an index, the model kept warm."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING

import click

from conba.cli.common import friendly_errors, index_model
from conba.cli.options import bare_model_options, index_option, model_option, placement_options, resolve_index_dir
from conba.cli.paths import InputPath

if TYPE_CHECKING:
    from conba.mcp.state import ServerState


@click.command("mcp")
@click.argument("paths", nargs=-1, type=InputPath())
@index_option
@model_option
@bare_model_options
@placement_options
@click.option("--watch", is_flag=True,
              help="Keep the index following PATHS while serving: changed files are re-indexed incrementally "
                   "(as `conba index --watch`), and the next tool call sees them.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: the client starts the server (the usual set-up); http: the SDK's streamable HTTP "
                   "transport at http://HOST:PORT/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --transport http: address to bind.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="With --transport http: TCP port.")
@friendly_errors
def mcp(paths: tuple[str, ...], index_dir: str | None, model: str | None, device: str, dtype: str, watch: bool,
        transport: str, host: str, port: int) -> None:
    """Serve conba's tools to coding agents and editors over the Model Context Protocol.

    Tools: search_code, find_counterpart, port_status, clones_of, compare, index_status (docs/mcp.md).
    Given PATHS, the index is built or updated from them first (as `conba map` does) and the tools may read
    only below PATHS; without PATHS the index must exist, and the tools read only the folders of its files.
    The model is loaded once and kept warm. Messages go to stderr; stdout carries the protocol.

    \b
    Examples:
      conba mcp .                          # index ./ into ./.conba-index, then serve over stdio
      conba mcp -i /srv/idx                # an existing index
      conba mcp src/ --watch               # and follow the working tree while serving
      conba mcp . --transport http --port 8765
    """
    try:
        from conba.mcp.server import build_server
    except ImportError as exc:
        raise click.ClickException(f"conba mcp needs the MCP SDK ({exc.name} is missing): "
                                   "pip install 'conba[mcp]'") from None

    if watch and not paths:
        raise click.UsageError("--watch needs PATHS: the folders to follow")
    folder = resolve_index_dir(index_dir)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # nothing but the protocol may reach stdout
        state = _open(folder, paths, model, watch, device, dtype)
    click.echo(f"conba mcp: {folder} ready in {time.perf_counter() - t0:.1f} s; serving over {transport}"
               + (f" at http://{host}:{port}/mcp" if transport == "http" else "")
               + (" (watching)" if watch else ""), err=True)
    server = build_server(state)
    if transport == "http":
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")


def _open(folder, paths: tuple[str, ...], model: str | None, watch: bool, device: str | None = None,
          dtype: str | None = None) -> ServerState:
    """The served state: the index built or updated from PATHS (or checked complete), its model loaded on
    ``device`` in ``dtype``."""
    from conba.cli.add_report import echo_add_report
    from conba.index import Index
    from conba.index.model.placement import place_index_model
    from conba.mcp.state import ServerState

    with Index(folder, **index_model(model), create=bool(paths), wait=True) as idx:
        place_index_model(idx, device, dtype)
        if paths:
            report = idx.add(list(paths))
            if report.units_encoded or report.files_changed:
                click.echo(f"Indexed {report.units_encoded} new functions -> {folder}", err=True)
            echo_add_report(report)
        else:
            idx.manifest()  # a complete index, or the one-line reason it is not
        loaded, engine = idx.model, idx.engine
    roots = [os.path.realpath(p) for p in paths] if paths else None
    return ServerState(folder, loaded, engine, roots, list(paths) if watch else None)
