"""Run the app under uvicorn: in the foreground (``conba serve``) or on a background thread (tests, scripts)."""

from __future__ import annotations

import errno
import socket
import threading
import time
from typing import Any


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def run(app: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
        access_log: bool = False) -> None:
    """Serve ``app`` until interrupted (one process: the model is in memory once)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access_log)


def run_starting(build: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info",
                 access_log: bool = False, *, loading: str = "loading the model", on_ready: Any = None,
                 token: str | None = None) -> None:
    """Listen at once and serve the app ``build()`` returns once it is built (:mod:`conba.serve.starting`);
    ``/health`` says "loading" until then. Raises what ``build()`` raised, after the server stopped."""
    import uvicorn

    from conba.serve.starting import StartingApp

    server: Any = None

    def stop() -> None:
        server.should_exit = True

    front = StartingApp(build, loading=loading, on_ready=on_ready, stop=stop, token=token)
    server = uvicorn.Server(uvicorn.Config(front, host=host, port=port, log_level=log_level, access_log=access_log))
    server.run()
    if front.error is not None:
        raise front.error


def check_port(host: str, port: int) -> None:
    """OSError naming ``host:port`` when a server could not listen there (in use, no such address), found
    before the model is loaded rather than by uvicorn after it. Port 0 (any free one) always passes."""
    if not port:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            sock.bind(address)
        except OSError as exc:
            hint = "; is another server there? pick another --port" if exc.errno == errno.EADDRINUSE else ""
            raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}{hint}") from None


class BackgroundServer:
    """``with BackgroundServer(app) as url:`` serves ``app`` on a free 127.0.0.1 port from a thread."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int | None = None, timeout: float = 60):
        import uvicorn

        self.host, self.port = host, port or free_port(host)
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.timeout = timeout
        self._thread = threading.Thread(target=self.server.run, daemon=True, name="conba-serve")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> str:
        self._thread.start()
        deadline = time.monotonic() + self.timeout
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the server on {self.url} failed to start")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server on {self.url} did not start in {self.timeout:.0f} s")
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=self.timeout)
