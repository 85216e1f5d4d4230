"""Load test of `conba serve` on 127.0.0.1: N concurrent clients for S seconds mixing /search and /compare.

    conba bench serve-load --index .conba-index                 # 50 clients, 60 s
    conba bench serve-load --index IDX --clients 10 --seconds 10 --json-out out.json
    conba bench serve-load --index IDX --bad-share 0.1    # 10% malformed requests mixed in

Starts `conba serve` on a free 127.0.0.1 port (or uses --url, which must be a loopback address),
measures a single warm search first (one client, sequential requests, query encoding included),
then runs the concurrent phase and reports throughput, p50/p95/p99 latency per call, errors and the
server's peak memory (VmHWM). Bounded: at most 200 clients, 600 s and --max-requests requests.
The snippets are the indexed functions themselves (read from the index), so the load is realistic.
With ``--bad-share F`` a fraction F of the requests is malformed (a lone surrogate in the code, which
the server must refuse with 422 without failing the good requests batched with it); errors among
the good requests (``errors``) and wrong answers to the bad ones (``bad_not_refused``) are counted apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

from conba.utils.io import write_text_atomic

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
BAD_CODE = 'x = "\\udcff"'  # JSON text whose string holds a lone surrogate: not valid Unicode
MAX_CLIENTS, MAX_SECONDS = 200, 600


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    a = np.asarray(values) * 1000
    return {"n": len(values), "p50_ms": round(float(np.percentile(a, 50)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1), "p99_ms": round(float(np.percentile(a, 99)), 1),
            "mean_ms": round(float(a.mean()), 1)}


def snippets(index_dir: str, limit: int = 2000) -> list[tuple[str, str]]:
    from conba.index import Index

    with Index(index_dir, create=False) as idx:
        units = idx.units()
    rng = random.Random(0)
    rng.shuffle(units)
    return [(u.code[:4000], u.language) for u in units[:limit] if u.code.strip()]


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def single_search(url: str, items: list[tuple[str, str]], n: int, token: str | None) -> dict[str, float]:
    """Sequential searches from one client: the latency of a lone warm search."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    times = []
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        for i in range(n + 5):
            code, lang = items[i % len(items)]
            t0 = time.perf_counter()
            r = c.post("/search", json={"code": code, "query_language": lang, "k": 10})
            r.raise_for_status()
            if i >= 5:  # the first few warm the connection and caches
                times.append(time.perf_counter() - t0)
    return percentiles(times)


def bad_body(op: str) -> bytes:
    """A malformed request body for ``op`` (the code holds a lone surrogate)."""
    field = '"code": "' if op == "search" else '"a": "def f(): pass", "b": "'
    return ("{" + field + BAD_CODE.replace('"', '\\"') + '"}').encode("ascii")


async def load(url: str, items: list[tuple[str, str]], clients: int, seconds: float, search_share: float,
               max_requests: int, token: str | None, bad_share: float = 0.0) -> dict:
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    lat: dict[str, list[float]] = {"search": [], "compare": []}
    errors: list[str] = []
    bad = {"sent": 0, "refused_422": 0, "not_refused": []}
    count = 0
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def client(seed: int, http: httpx.AsyncClient) -> None:
        nonlocal count
        rng = random.Random(seed)
        while time.perf_counter() < deadline and count < max_requests:
            count += 1
            if rng.random() < search_share:
                op, (code, lang) = "search", rng.choice(items)
                body: dict = {"code": code, "query_language": lang, "k": 10}
            else:
                (a, la), (b, lb) = rng.choice(items), rng.choice(items)
                op, body = "compare", {"a": a, "b": b, "language_a": la, "language_b": lb}
            if rng.random() < bad_share:
                bad["sent"] += 1
                try:
                    r = await http.post(f"/{op}", content=bad_body(op),
                                        headers={"content-type": "application/json"})
                    ok = r.status_code == 422
                    bad["refused_422"] += ok
                    if not ok:
                        bad["not_refused"].append(f"{op} {r.status_code} {r.text[:200]}")
                except httpx.HTTPError as exc:
                    bad["not_refused"].append(f"{op} {type(exc).__name__}: {exc}")
                continue
            t0 = time.perf_counter()
            try:
                r = await http.post(f"/{op}", json=body)
                if r.status_code != 200:
                    errors.append(f"{op} {r.status_code} {r.text[:200]}")
                    continue
            except httpx.HTTPError as exc:
                errors.append(f"{op} {type(exc).__name__}: {exc}")
                continue
            lat[op].append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as http:
        await asyncio.gather(*[client(i, http) for i in range(clients)])
    wall = time.perf_counter() - t0
    done = sum(len(v) for v in lat.values())
    return {"clients": clients, "seconds": round(wall, 1), "requests": done + len(errors),
            "throughput_rps": round(done / wall, 1), "errors": len(errors), "error_samples": errors[:5],
            "good_requests": done + len(errors), "bad_requests": bad["sent"], "bad_refused_422": bad["refused_422"],
            "bad_not_refused": len(bad["not_refused"]), "bad_samples": bad["not_refused"][:5],
            "search": percentiles(lat["search"]), "compare": percentiles(lat["compare"]),
            "all": percentiles(lat["search"] + lat["compare"])}


def start_server(index_dir: str, workers: int | None, token: str | None) -> tuple[subprocess.Popen, str]:
    import httpx

    from conba.serve.server import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "conba.cli.main", "serve", "--index", index_dir, "--port", str(port),
           "--log-level", "warning", "--reload-interval", "0"]
    if workers:
        cmd += ["--workers", str(workers)]
    env = dict(os.environ, **({"CONBA_TOKEN": token} if token else {}))
    proc = subprocess.Popen(cmd, env=env)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    deadline = time.monotonic() + 180
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"conba serve exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/health", headers=headers, timeout=5).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("conba serve did not come up in 180 s")
        time.sleep(0.5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=".conba-index", help="index to serve and to draw snippets from")
    ap.add_argument("--url", default=None, help="an already running server (127.0.0.1 only)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--search-share", type=float, default=0.7, help="fraction of requests that are /search")
    ap.add_argument("--single", type=int, default=100, help="sequential searches for the single-search p50")
    ap.add_argument("--max-requests", type=int, default=200_000)
    ap.add_argument("--workers", type=int, default=None, help="--workers of the started server")
    ap.add_argument("--json-out", default=None, help="write the results here")
    ap.add_argument("--bad-share", type=float, default=0.0,
                    help="fraction of malformed requests mixed in (e.g. 0.1); errors among good ones are counted apart")
    args = ap.parse_args()
    if not 0 <= args.bad_share < 1:
        raise SystemExit("--bad-share must be in [0, 1)")
    if not 1 <= args.clients <= MAX_CLIENTS or not 0 < args.seconds <= MAX_SECONDS:
        raise SystemExit(f"--clients must be 1..{MAX_CLIENTS} and --seconds 0..{MAX_SECONDS}")
    token = os.environ.get("CONBA_TOKEN")
    items = snippets(args.index)
    proc = None
    if args.url:
        if urlparse(args.url).hostname not in LOOPBACK:
            raise SystemExit("--url must be a loopback address (127.0.0.1): this script only loads local servers")
        url = args.url.rstrip("/")
    else:
        proc, url = start_server(args.index, args.workers, token)
    try:
        import httpx

        health = httpx.get(f"{url}/health", headers={"Authorization": f"Bearer {token}"} if token else {}).json()
        load_before = os.getloadavg()
        single = single_search(url, items, args.single, token)
        result = asyncio.run(load(url, items, args.clients, args.seconds, args.search_share, args.max_requests,
                                  token, args.bad_share))
        out = {"index_functions": health["index"].get("functions"), "model": health["model"]["name"],
               "workers": health["workers"], "threads_per_worker": health["threads_per_worker"],
               "cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
               "loadavg_after": [round(x, 2) for x in os.getloadavg()], "single_search": single, **result,
               "batching": httpx.get(f"{url}/health", headers={"Authorization": f"Bearer {token}"} if token
                                     else {}).json()["batching"],
               "server_peak_rss_mb": peak_rss_mb(proc.pid) if proc else None}
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    print(json.dumps(out, indent=2))
    if args.json_out:
        write_text_atomic(args.json_out, json.dumps(out, indent=2) + "\n")
    return 1 if out["errors"] or out["bad_not_refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
