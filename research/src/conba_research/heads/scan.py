"""Linear recurrences over the token axis without a Python loop over time.

Glossary:
    b: batch size
    l: sequence length (padding included)
    d: model width
    n: SSM state size

Both ConbaLayer heads run a first-order linear recurrence with element-wise (diagonal) decay,

    h_t = a_t ⊙ h_{t-1} + u_t          h_{-1} = 0,   0 < a_t ≤ 1

(the ConbaLayer over tokens with a diagonal A: a_t = exp(A), u_t = B · x_t, shape (b, l, d); conba-scan:
a_t = exp(Δ_t A), u_t = Δ_t B_t x_t, shape (b, l, d, n)). A padded position has a_t = 1 and u_t = 0, so it
carries the state through unchanged and padding never changes a real token's state.

``linear_scan`` takes log a_t and works in log space, in chunks: with E_t the cumulative sum of log a
inside a chunk, h_t = exp(E_t) · cumsum_k(exp(-E_k) · u_k) + exp(E_t) · (state entering the chunk).
The chunk length T is chosen so that |E| ≤ ``SCAN_BOUND`` (= 40) inside every chunk, so exp(-E) never
overflows (e^40 ≈ 2e17) and, since the weights grow towards the current token, the cumulative sum has
no cancellation. The states entering the chunks follow the same recurrence over chunks (decay
exp(E_last), input the chunk's last local state), computed by ``doubling_scan`` (Hillis–Steele,
ceil(log2 #chunks) vectorised steps). Decays below e^-40 (≈ 4e-18) are treated as e^-40.

Why this form (measured in docs/BENCHMARKS.md, b=32 l=512 d=384 on a 2-core CPU): the Python loop is
cheap forward but its autograd graph of l steps is slow to train through; the plain doubling scan does
O(l log l) work in large tensors; the chunked log-space form is a handful of passes (exp, cumsum,
multiply) and trains fastest. ``linear_scan_reference`` is the sequential definition.
"""

from __future__ import annotations

import torch

SCAN_BOUND = 40.0


def linear_scan(log_a: torch.Tensor, u: torch.Tensor, bound: float = SCAN_BOUND) -> torch.Tensor:
    """All states of h_t = exp(log_a_t) ⊙ h_{t-1} + u_t (h_{-1} = 0), chunked log-space scan.

    Args:
        log_a: shape (b, l, ...) log decays, ≤ 0 (any trailing shape, e.g. (b, l, d) or (b, l, d, n))
        u: same shape as log_a, the inputs
        bound: the largest |cumulative log decay| inside one chunk
    Returns:
        h: shape (b, l, ...) in u's dtype (computed in at least float32)
    """
    if log_a.shape != u.shape:
        raise ValueError(f"linear_scan needs log_a and u of one shape, got {tuple(log_a.shape)} and {tuple(u.shape)}")
    out_dtype = u.dtype
    if u.dtype in (torch.float16, torch.bfloat16):
        log_a, u = log_a.float(), u.float()
    b, l, rest = u.shape[0], u.shape[1], u.shape[2:]
    if l == 0 or u.numel() == 0:
        return u.clone()
    log_a = log_a.clamp(min=-bound)
    worst = float(-log_a.min().detach())
    chunk = l if worst * l <= bound else max(1, int(bound // worst))
    n_chunks = -(-l // chunk)
    pad = n_chunks * chunk - l
    if pad:
        log_a = torch.cat([log_a, log_a.new_zeros(b, pad, *rest)], dim=1)
        u = torch.cat([u, u.new_zeros(b, pad, *rest)], dim=1)
    e = log_a.reshape(b, n_chunks, chunk, *rest).cumsum(dim=2)  # (b, c, T, ...), in [-bound, 0]
    decay = torch.exp(e)
    local = decay * torch.cumsum(torch.exp(-e) * u.reshape(b, n_chunks, chunk, *rest), dim=2)
    if n_chunks > 1:
        ends = doubling_scan(decay[:, :, -1], local[:, :, -1])  # state after each chunk (b, c, ...)
        entering = torch.cat([torch.zeros_like(ends[:, :1]), ends[:, :-1]], dim=1)
        local = local + decay * entering.unsqueeze(2)
    return local.reshape(b, n_chunks * chunk, *rest)[:, :l].to(out_dtype)


def doubling_scan(a: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """All states of h_t = a_t ⊙ h_{t-1} + u_t (h_{-1} = 0): Hillis–Steele doubling over dim 1.

    ceil(log2 l) steps on the pairs (a_t, u_t) with (a1, u1) ∘ (a2, u2) = (a1 · a2, a2 · u1 + u2).

    Args:
        a, u: shape (b, l, ...)
    Returns:
        h: shape (b, l, ...)
    """
    h = u
    l = u.shape[1]
    k = 1
    while k < l:
        h = torch.cat([h[:, :k], torch.addcmul(h[:, k:], a[:, k:], h[:, :-k])], dim=1)
        if 2 * k < l:
            a = torch.cat([a[:, :k], a[:, k:] * a[:, :-k]], dim=1)
        k *= 2
    return h


def linear_scan_reference(a: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The sequential loop over l (h_t = a_t ⊙ h_{t-1} + u_t) that the scans must match.

    Args:
        a, u: shape (b, l, ...) decays (not their logs) and inputs
    Returns:
        h: shape (b, l, ...)
    """
    h = torch.zeros_like(u[:, 0])
    states = []
    for t in range(u.shape[1]):
        h = a[:, t] * h + u[:, t]
        states.append(h)
    return torch.stack(states, dim=1) if states else torch.zeros_like(u)
