"""``conba serve``: the model and the index held in memory behind an HTTP API and a search page."""

from __future__ import annotations

import ipaddress

import click

from conba.cli.common import friendly_errors
from conba.cli.options import (
    TOKEN_ENV,
    FiniteFloat,
    bare_model_options,
    bare_model_settings,
    engine_option,
    fast_option,
    index_option,
    model_option,
    parse_size,
    placement_options,
    resolve_index_dir,
    resolve_model,
)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ServeCommand(click.Command):
    """``conba serve``: its help ends with the endpoints, read from the app's routes (never a list kept by hand;
    the property is what click's help and the user guide's CLI reference both read)."""

    @property
    def help(self) -> str | None:
        import inspect

        from conba.serve.describe import endpoints_help

        return inspect.cleandoc(self._own_help or "") + "\n\n" + endpoints_help()

    @help.setter
    def help(self, value: str | None) -> None:
        self._own_help = value


@click.command("serve", cls=ServeCommand)
@index_option
@model_option
@bare_model_options
@engine_option(default=None, help="Queries are encoded with it; it must be the index's. Default: the index's "
                                  "engine (torch without an index).")
@fast_option
@placement_options(help="Where the model runs (it stays there between requests)")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (localhost only by default).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--token", envvar=TOKEN_ENV, show_envvar=True, default=None, metavar="TOKEN",
              help="Require 'Authorization: Bearer TOKEN' on every API call.")
@click.option("--workers", default=None, type=click.IntRange(1), metavar="N",
              help="Encoding threads (default: one per two physical cores, two torch threads each).")
@click.option("--max-body", default="1MB", show_default=True, metavar="SIZE", help="Largest request body.")
@click.option("--max-snippets", default=64, show_default=True, type=click.IntRange(1),
              help="Most snippets (or a file's functions) one request encodes: /encode, /search/files.")
@click.option("--max-chars", default=20_000, show_default=True, type=click.IntRange(1),
              help="Most characters per snippet.")
@click.option("--max-map-pairs", default=25_000_000, show_default=True, type=click.IntRange(1),
              help="Most source x target function pairs one /map request scores.")
@click.option("--reload-interval", default=1.0, show_default=True, metavar="SECONDS", type=FiniteFloat(0),
              help="How often to look for a re-indexed index (0: never).")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.option("--access-log", is_flag=True, help="Log every request.")
@friendly_errors
def serve(index_dir: str | None, model: str | None, engine: str | None, host: str, port: int, token: str | None,
          workers: int | None, max_body: str, max_snippets: int, max_chars: int, reload_interval: float,
          log_level: str, access_log: bool, device: str = "auto", dtype: str = "auto",
          max_map_pairs: int = 25_000_000) -> None:
    """Serve search, compare, encode and clones over HTTP, with the model loaded once.

    The endpoints are listed below; each one's fields, with a description and an example, are at /docs. The
    index is reloaded when `conba index` updates it; searches keep using the previous one until the new one is
    complete. Clients: `conba.Client("http://127.0.0.1:8000")` in Python, or any HTTP client.

    \b
    Examples:
      conba serve                                  # ./.conba-index on http://127.0.0.1:8000
      conba serve --index /srv/idx --port 9000
      conba serve --fast --index fast-index       # an index built with `conba index --fast`
      CONBA_TOKEN=s3cret conba serve --host 0.0.0.0
      conba serve --device cuda                    # the model stays on the GPU (float16)
      curl -s localhost:8000/search -H 'content-type: application/json' \\
        -d '{"code": "def gcd(a, b): ...", "query_language": "python", "result_language": "java"}'
    """
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:  # looked up, not imported: the app is imported on the loading thread, after the server listens
        raise click.ClickException(f"conba serve needs FastAPI and uvicorn ({missing[0]} is missing): "
                                   "pip install 'conba[serve]'")
    from conba.index.vectors.ivf import check_env
    from conba.serve.server import check_port, run_starting

    check_env()  # a bad CONBA_IVF_NPROBE / _NLIST: one line before anything is printed or served
    try:
        check_port(host, port)
    except OSError as exc:
        raise click.ClickException(str(exc)) from None
    if not _is_loopback(host) and not token:
        click.echo(f"warning: serving on {host} without --token: anyone who can reach it can use it", err=True)
    max_body_bytes = parse_size(max_body)
    folder = resolve_index_dir(index_dir)
    name, options = resolve_model(model), bare_model_settings()

    def build():  # on a thread, while /health answers "loading" (conba.serve.starting)
        from conba.serve.app import create_app
        from conba.serve.limits import Limits

        limits = Limits(max_body_bytes=max_body_bytes, max_snippets=max_snippets, max_chars=max_chars,
                        max_map_pairs=max_map_pairs)
        return create_app(folder, name, token=token, limits=limits, workers=workers, reload_interval=reload_interval,
                          engine=engine, device=device, dtype=dtype, model_options=options)

    def ready(app, seconds: float) -> None:
        from conba.serve.app import serving_device

        state = app.state.conba
        click.echo(f"conba serve: ready in {seconds:.1f} s (model {state.model_name} on {serving_device(state.model)}, "
                   f"{state.batcher.workers} workers)", err=True)

    click.echo(f"conba serve: http://{host}:{port} (index {folder}; loading the model, /health says when it is "
               "ready; API docs at /docs)", err=True)
    run_starting(build, host=host, port=port, log_level=log_level, access_log=access_log,
                 loading=f"loading the model of {folder}", on_ready=ready, token=token)
