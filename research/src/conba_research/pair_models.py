"""Torch clone / not-clone classifiers on a pair of embeddings (u, v).

Glossary:
    b: batch size (pairs)
    d: embedding width
    h: hidden width
    p: projected width of the recurrent heads' inputs
    s: sequence length of the recurrent heads (4: u, v, |u − v|, u ⊙ v)

All nets return one logit per pair and are symmetric in (u, v): the MLPs and the CNN see symmetric
features only; the recurrent heads read the sequence [u, v, |u − v|, u ⊙ v] and average the logits of
(u, v) and (v, u). The recurrent heads first project each element to p = 64 dims (cheap on a CPU).
Training and scoring on a CPU run with one torch thread: these nets are small, and extra threads only
contend with other jobs.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from conba.settings import torch_threads


def pair_features(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Args: u, v: shape (b, d). Returns (b, 2d) = [|u − v|, u ⊙ v]."""
    return torch.cat([(u - v).abs(), u * v], dim=-1)


class MLP(nn.Module):
    def __init__(self, d: int, h: int = 256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 * d, h), nn.ReLU(), nn.Dropout(0.1), nn.Linear(h, 1))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Args: u, v: shape (b, d). Returns logits (b,)."""
        return self.net(pair_features(u, v)).squeeze(-1)


class ResMLP(nn.Module):
    """Two pre-norm residual blocks on the pair features."""

    def __init__(self, d: int, h: int = 256, blocks: int = 2):
        super().__init__()
        self.inp = nn.Linear(2 * d, h)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(h), nn.Linear(h, h), nn.GELU(), nn.Dropout(0.1),
                                                  nn.Linear(h, h)) for _ in range(blocks))
        self.out = nn.Sequential(nn.LayerNorm(h), nn.Linear(h, 1))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Args: u, v: shape (b, d). Returns logits (b,)."""
        x = self.inp(pair_features(u, v))  # (b, h)
        for block in self.blocks:
            x = x + block(x)
        return self.out(x).squeeze(-1)


class CNN(nn.Module):
    """1-D convolutions along the embedding axis over 3 symmetric channels (u + v, |u − v|, u ⊙ v),
    then max- and mean-pooling into ``pooled`` bins each (the mean of u ⊙ v is the cosine)."""

    def __init__(self, d: int, channels: int = 16, pooled: int = 8):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(3, channels, 5, padding=2), nn.ReLU(),
                                  nn.Conv1d(channels, channels, 5, padding=2))
        self.max_pool, self.avg_pool = nn.AdaptiveMaxPool1d(pooled), nn.AdaptiveAvgPool1d(pooled)
        self.out = nn.Sequential(nn.ReLU(), nn.Linear(2 * channels * pooled, 1))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Args: u, v: shape (b, d). Returns logits (b,)."""
        x = self.conv(torch.stack([u + v, (u - v).abs(), u * v], dim=1))  # (b, channels, d)
        return self.out(torch.cat([self.max_pool(x), self.avg_pool(x)], dim=1).flatten(1)).squeeze(-1)


class _Recurrent(nn.Module):
    bidirectional = False
    cell: type[nn.Module] = nn.GRU

    def __init__(self, d: int, h: int = 64, p: int = 64):
        super().__init__()
        self.proj = nn.Linear(d, p)
        self.rnn = self.cell(p, h, batch_first=True, bidirectional=self.bidirectional)
        self.out = nn.Linear(h * (2 if self.bidirectional else 1), 1)

    def _one(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq = torch.relu(self.proj(torch.stack([u, v, (u - v).abs(), u * v], dim=1)))  # (b, s, p)
        _, hidden = self.rnn(seq)
        if isinstance(hidden, tuple):  # LSTM: (h_n, c_n)
            hidden = hidden[0]
        last = torch.cat(list(hidden[-(2 if self.bidirectional else 1):]), dim=-1)  # (b, h) or (b, 2h)
        return self.out(last).squeeze(-1)

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Args: u, v: shape (b, d). Returns logits (b,), symmetric in (u, v)."""
        return 0.5 * (self._one(u, v) + self._one(v, u))


class GRU(_Recurrent):
    cell = nn.GRU


class BiLSTM(_Recurrent):
    cell = nn.LSTM
    bidirectional = True


NETS: dict[str, type[nn.Module]] = {"mlp": MLP, "gru": GRU, "cnn": CNN, "bilstm": BiLSTM, "resmlp": ResMLP}


def _cpu_threads(device: str | torch.device):
    """One torch thread for the block when ``device`` is the CPU (small nets: threads only add overhead)."""
    return torch_threads(1 if torch.device(device).type == "cpu" else 0)


def fit_net(net: nn.Module, u: np.ndarray, v: np.ndarray, y: np.ndarray, *, epochs: int = 30, lr: float = 1e-3,
            batch_size: int = 128, seed: int = 0, device: str | torch.device = "cpu") -> nn.Module:
    """Binary cross-entropy training with Adam on (u, v, y); returns the net in eval mode."""
    g = torch.Generator().manual_seed(seed)
    U, V = torch.as_tensor(u, dtype=torch.float32), torch.as_tensor(v, dtype=torch.float32)
    Y = torch.as_tensor(y, dtype=torch.float32)
    net.to(device).train()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    loss_fn = nn.BCEWithLogitsLoss()
    with _cpu_threads(device):
        for _ in range(epochs):
            perm = torch.randperm(len(Y), generator=g)
            for s in range(0, len(Y), batch_size):
                idx = perm[s:s + batch_size]
                loss = loss_fn(net(U[idx].to(device), V[idx].to(device)), Y[idx].to(device))
                opt.zero_grad()
                loss.backward()
                opt.step()
    return net.eval()


@torch.inference_mode()
def net_scores(net: nn.Module, u: np.ndarray, v: np.ndarray, batch_size: int = 1024,
               device: str | torch.device = "cpu") -> np.ndarray:
    """Clone probabilities (n,) in [0, 1]."""
    U, V = torch.as_tensor(u, dtype=torch.float32), torch.as_tensor(v, dtype=torch.float32)
    with _cpu_threads(device):
        out = [torch.sigmoid(net(U[s:s + batch_size].to(device), V[s:s + batch_size].to(device))).float().cpu()
               for s in range(0, len(U), batch_size)]
    return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.float32)
