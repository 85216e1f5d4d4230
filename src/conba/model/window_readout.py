"""The long-input read-out of the shipped model: one vector per snippet from the vectors of its windows,
through the model's window head (:func:`read_out_windows`, used by ``ConbaModel.encode``). The research
suite's ``conba_research.window_encode`` gives every window's vector on its own (the experiments' input).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def read_out_windows(head: torch.nn.Module, windows: torch.Tensor, owner: Sequence[int],
                     weight: Sequence[int], n: int) -> torch.Tensor:
    """One vector per snippet from its windows: a snippet of one window keeps that window's vector
    (bit for bit), a longer one gets ``head``'s read-out of its windows in source order
    (:class:`conba.heads.window_head.WindowHead`; it runs in the head's dtype and device).

    Args:
        windows: shape (c, d), every window's vector, each snippet's windows consecutive and in order
        owner: c snippet numbers in 0..n-1; weight: c content-token counts
    Returns:
        shape (n, d), same dtype as ``windows``, not normalised
    """
    own = torch.as_tensor(list(owner), dtype=torch.long)
    count = torch.bincount(own, minlength=n)
    if int(count.min()) < 1:
        raise ValueError("every snippet needs at least one window")
    first = torch.cumsum(count, 0) - count  # row of each snippet's first window
    out = windows[first].clone()
    many = torch.nonzero(count > 1).flatten()
    if not len(many):
        return out
    slot = torch.full((n,), -1, dtype=torch.long)
    slot[many] = torch.arange(len(many))
    rows = torch.nonzero(slot[own] >= 0).flatten()  # the windows of the long snippets
    pos = rows - first[own[rows]]
    f = int(count.max())
    x = torch.zeros(len(many), f, windows.shape[1], dtype=windows.dtype)
    mask = torch.zeros(len(many), f, dtype=torch.bool)
    w = torch.zeros(len(many), f, dtype=windows.dtype)
    x[slot[own[rows]], pos] = windows[rows]
    mask[slot[own[rows]], pos] = True
    w[slot[own[rows]], pos] = torch.as_tensor(list(weight), dtype=windows.dtype)[rows]
    param = next(head.parameters(), None)
    if param is not None:  # a trained head runs where and in the precision it lives
        x, w = x.to(param.device, param.dtype), w.to(param.device, param.dtype)
        mask = mask.to(param.device)
    with torch.no_grad():
        out[many] = head(x, mask, w).to(out.dtype).cpu()
    return out
