"""Time the token recurrences of the ConbaLayer heads: parallel scans against the Python loop over time.

Usage: PYTHONPATH=src python scripts/bench_scan.py [--b 32 --l 512 --d 384 --n 16 --repeats 3 --backward]

Prints one JSON line per measurement (seconds, best of ``--repeats``). Shapes: b batch, l tokens,
d width, n SSM state size; about 20% of each row is right padding.

* conba (tokens), the state over tokens (b, l, d): the old dense-A loop (``--state-a dense``), the same
  recurrence with a diagonal A as a loop, and the diagonal A's chunked log-space scan (the default).
* conba-scan, the selective scan (b, l, d, n): the loop, the Hillis–Steele doubling scan (the code before
  the chunked scan), and the chunked log-space scan.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch

from conba.heads import HeadConfig, build_head, linear_scan, linear_scan_reference
from conba.heads.scan import doubling_scan


def best_of(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def timed(fn, repeats: int, backward: bool, leaf: torch.Tensor) -> float:
    if not backward:
        with torch.no_grad():
            return best_of(fn, repeats)

    def step():
        leaf.grad = None
        fn().sum().backward()
    return best_of(step, repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("b", 32), ("l", 512), ("d", 384), ("n", 16), ("repeats", 3)):
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--backward", action="store_true", help="time forward + backward instead of forward")
    ap.add_argument("--skip-scan", action="store_true", help="only the ConbaLayer (b, l, d) recurrences")
    args = ap.parse_args()
    b, l, d, n, r = args.b, args.l, args.d, args.n, args.repeats
    torch.manual_seed(0)
    lengths = torch.randint(int(0.6 * l), l + 1, (b,))
    mask = torch.arange(l)[None, :] < lengths[:, None]  # (b, l)
    x = torch.randn(b, l, d, requires_grad=args.backward)
    common = {"b": b, "l": l, "d": d, "threads": torch.get_num_threads(), "backward": args.backward}

    def report(what: str, seconds: float, **extra) -> None:
        print(json.dumps({"what": what, "seconds": round(seconds, 4), **common, **extra}), flush=True)

    diag = build_head(HeadConfig(kind="conba", dim=d, mode="tokens"))
    dense = build_head(HeadConfig(kind="conba", dim=d, mode="tokens", state_a="dense"))
    m = mask.unsqueeze(-1).float()

    def diag_loop():
        a = torch.exp(-torch.exp(diag.A_log)) * m + (1 - m)  # padding: decay 1, input 0
        return linear_scan_reference(a, diag.B(x) * m)
    t_dense = timed(lambda: dense.states(x, mask), r, args.backward, x)
    report("conba tokens: dense A, loop over l (before)", t_dense)
    t_loop = timed(diag_loop, r, args.backward, x)
    report("conba tokens: diagonal A, loop over l", t_loop)
    t_scan = timed(lambda: diag.states(x, mask), r, args.backward, x)
    report("conba tokens: diagonal A, chunked log-space scan", t_scan,
           speedup_vs_dense_loop=round(t_dense / t_scan, 2), speedup_vs_diag_loop=round(t_loop / t_scan, 2))
    if args.skip_scan:
        return
    dt = torch.exp(torch.rand(b, l, d) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)) * m  # Mamba init
    A = -torch.arange(1, n + 1, dtype=torch.float32).repeat(d, 1)  # (d, n)
    log_deltaA = torch.einsum("bld,dn->bldn", dt, A)
    u = torch.randn(b, l, d, n, requires_grad=args.backward)
    deltaBx = u * dt.unsqueeze(-1)
    if args.backward:
        log_deltaA.requires_grad_(False)
    common["n"] = n
    t_loop = timed(lambda: linear_scan_reference(torch.exp(log_deltaA), deltaBx if not args.backward
                                                 else u * dt.unsqueeze(-1)), r, args.backward, u)
    report("conba-scan: selective scan, loop over l", t_loop)
    t_dbl = timed(lambda: doubling_scan(torch.exp(log_deltaA), deltaBx if not args.backward
                                        else u * dt.unsqueeze(-1)), r, args.backward, u)
    report("conba-scan: selective scan, doubling (before)", t_dbl, speedup_vs_loop=round(t_loop / t_dbl, 2))
    t_scan = timed(lambda: linear_scan(log_deltaA, deltaBx if not args.backward else u * dt.unsqueeze(-1)),
                   r, args.backward, u)
    report("conba-scan: selective scan, chunked log-space scan", t_scan,
           speedup_vs_loop=round(t_loop / t_scan, 2), speedup_vs_doubling=round(t_dbl / t_scan, 2))


if __name__ == "__main__":
    main()
