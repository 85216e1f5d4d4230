"""The fair fight over a program's windows: window heads on cached window vectors of one frozen model.

Glossary: n snippets, f windows per snippet at most, d model width, b batch.

Every row reads the same cached window vectors (:mod:`conba_research.window_cache`: up to f windows
of 512 tokens per snippet, after the model's input view, from the shipped default with its backbone
frozen). Trained rows (ConbaLayer over f and its ablations, conba-scan over f, a linear map on the mean,
attention pooling) train contrastively (in-batch supcon, P groups × K snippets in different languages)
for the same number of optimiser steps with each seed; parameter-free rows (mean, max, first window)
and today's default (the first 512 tokens, ``max_windows`` 1) are scored once. Every head returns a
one-window snippet as it is (``single="identity"``), so the rows differ only on long snippets.

Scores per dev set: mean cross-language MAP@R over all queries, and over the long queries only
(snippets longer than one window after the view), each against all candidates.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from conba.eval.metrics import cross_language_retrieval, embedding_similarity
from conba.heads.window_head import (
    CONFIG_NAME,
    WindowHead,
    WindowHeadConfig,
    build_window_head,
    load_window_head,
    save_window_head,
)
from conba.utils.io import read_json, write_json_atomic


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    label: str
    reader: str = ""  # "" = today's default (truncation), scored from its own cache
    use_control: bool = True
    use_feedback: bool = True
    use_state: bool = True

    def config(self, dim: int) -> WindowHeadConfig:
        return WindowHeadConfig(reader=self.reader, dim=dim, use_control=self.use_control,
                                use_feedback=self.use_feedback, use_state=self.use_state)

    @property
    def trained(self) -> bool:
        return self.reader in ("conba", "conba-scan", "linear", "attention")


ROWS: tuple[Row, ...] = (
    Row("truncate", "today's default: the first 512 tokens (max_windows 1)"),
    Row("first", "first window of the near-equal windows", "first"),
    Row("mean", "token-weighted mean of the windows (encode max_windows 8)", "mean"),
    Row("max", "element-wise max of the windows", "max"),
    Row("linear", "mean of the windows + trained linear map (identity start)", "linear"),
    Row("attention", "attention pooling over the windows (trained, mean start)", "attention"),
    Row("conba", "ConbaLayer as a recurrence over the windows (diagonal A)", "conba"),
    Row("conba-no-control", "ConbaLayer over the windows, without control_weight", "conba", use_control=False),
    Row("conba-no-feedback", "ConbaLayer over the windows, without feedback_weight", "conba", use_feedback=False),
    Row("conba-no-state", "ConbaLayer over the windows, without the state (no A, B)", "conba", use_state=False),
    Row("conba-scan", "conba-scan (S6) over the windows", "conba-scan"),
)


@dataclasses.dataclass
class WindowSet:
    """One data set's cached windows: ``vectors`` (n, f, d), ``weight`` (n, f), ``truncated`` (n, d):
    today's default vector (the first 512 tokens) of every snippet, or None (training sets)."""

    name: str
    records: list
    vectors: np.ndarray
    weight: np.ndarray
    truncated: np.ndarray | None = None

    @property
    def long(self) -> np.ndarray:
        return (self.weight > 0).sum(axis=1) > 1


@dataclasses.dataclass
class TrainSettings:
    steps: int = 300
    groups_per_batch: int = 32
    per_group: int = 4
    lr: float = 1e-3
    temperature: float = 0.05


def long_query_map(sim: np.ndarray, records: Sequence, queries: np.ndarray) -> float:
    """Mean over ordered language pairs of MAP@R of the ``queries`` (n,) bool only, each against every
    record of the other language (:func:`conba.eval.long_inputs.long_query_map`, as ``conba eval``)."""
    from conba.eval.long_inputs import long_query_map as by_pair

    return by_pair(sim, [r.group for r in records], [r.language for r in records], queries)["map_at_r"]


def score(emb: np.ndarray, fs: WindowSet) -> dict:
    sim = embedding_similarity(emb)
    whole = cross_language_retrieval(sim, [r.group for r in fs.records], [r.language for r in fs.records])
    return {"map_at_r": whole["mean"]["map_at_r"], "long_map_at_r": long_query_map(sim, fs.records, fs.long),
            "long_queries": int(fs.long.sum()), "snippets": len(fs.records)}


@torch.no_grad()
def embed(head: WindowHead, fs: WindowSet, batch: int = 1024) -> np.ndarray:
    head.eval()
    out = []
    for s in range(0, len(fs.records), batch):
        x = torch.from_numpy(fs.vectors[s:s + batch])
        w = torch.from_numpy(fs.weight[s:s + batch])
        out.append(head(x, w > 0, w).numpy())
    return np.concatenate(out)


def train_head(row: Row, train: WindowSet, seed: int, ts: TrainSettings, log=print) -> tuple[WindowHead, list]:
    """``ts.steps`` optimiser steps of in-batch supcon on ``train``'s windows; returns the head and the losses."""
    from conba.train.losses import in_batch_loss
    from conba.train.sampler import GroupBatchSampler

    if not train.long.any():
        raise ValueError("the training windows hold no snippet longer than one window: nothing to train")
    torch.manual_seed(seed)
    head = build_window_head(row.config(train.vectors.shape[-1]))
    sampler = GroupBatchSampler([r.group for r in train.records], [r.language for r in train.records],
                                p=ts.groups_per_batch, k=ts.per_group, seed=seed)
    _, gid = np.unique(np.array([r.group for r in train.records]), return_inverse=True)
    opt = torch.optim.AdamW(head.parameters(), lr=ts.lr, weight_decay=0.0)
    losses: list[float] = []
    epoch = 0
    head.train()
    while len(losses) < ts.steps:
        for idx in sampler.epoch(epoch):
            idx = np.asarray(idx)
            w = torch.from_numpy(train.weight[idx])
            emb = head(torch.from_numpy(train.vectors[idx]), w > 0, w)
            loss = in_batch_loss(emb, torch.from_numpy(gid[idx]), ts.temperature)
            if loss.requires_grad:  # a batch without a long snippet leaves every head as it is
                opt.zero_grad()
                loss.backward()
                opt.step()
            losses.append(float(loss.detach()))
            if len(losses) >= ts.steps:
                break
        epoch += 1
    return head, losses


def run_fight(train: WindowSet, dev: list[WindowSet], out_dir: str | Path, rows: Sequence[Row] = ROWS,
              seeds: Sequence[int] = (0, 1, 2), ts: TrainSettings | None = None, log=print) -> dict:
    """Score every row (trained rows once per seed, resumable via ``out_dir/fragment_runs.json``).

    A head already saved in ``out_dir/heads/<row>-s<seed>/`` is evaluated, not trained again (so one
    set of trained heads can be scored on a held-out part of the dev data)."""
    from conba.settings import apply_threads

    apply_threads()  # CONBA_THREADS (1 trains these small heads fastest on a shared CPU)
    ts = ts or TrainSettings()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    done_path = out_dir / "fragment_runs.json"
    done: dict = read_json(done_path) if done_path.exists() else {}
    dim = train.vectors.shape[-1]
    for row in rows:
        for seed in (seeds if row.trained else [0]):
            key = f"{row.name}|{seed}"
            if key in done:
                continue
            t0 = time.time()
            saved = out_dir / "heads" / f"{row.name}-s{seed}"
            reused = row.trained and (saved / CONFIG_NAME).exists()
            if reused:  # trained before (same rows, seeds, data and settings: training is deterministic)
                head, losses = load_window_head(saved), []
            elif row.trained:
                head, losses = train_head(row, train, seed, ts, log)
                save_window_head(head, saved)
            else:
                losses = []
                head = build_window_head(row.config(dim)) if row.reader else None
            train_s = time.time() - t0
            scores = {}
            for fs in dev:
                emb = embed(head, fs) if head is not None else fs.truncated
                scores[fs.name] = score(emb, fs)
            done[key] = {"row": row.name, "seed": seed, "steps": ts.steps if reused else len(losses),
                         "reused_head": reused, "train_s": round(train_s, 1),
                         "final_loss": float(np.mean(losses[-20:])) if losses else None, "scores": scores}
            write_json_atomic(done_path, done)
            log(f"{row.name} seed {seed}: " + ", ".join(
                f"{k} {v['map_at_r']:.4f} / long {v['long_map_at_r']:.4f}" for k, v in scores.items()))
    return done


def summary(done: dict, rows: Sequence[Row] = ROWS) -> list[dict]:
    """Per row: seeds, and mean ± std over seeds of each dev set's whole and long MAP@R."""
    out = []
    for row in rows:
        runs = [r for r in done.values() if r["row"] == row.name]
        if not runs:
            continue
        entry = {"row": row.name, "label": row.label, "seeds": len(runs), "steps": runs[0]["steps"],
                 "train_s": float(np.mean([r["train_s"] for r in runs])), "scores": {}}
        for name in runs[0]["scores"]:
            for metric in ("map_at_r", "long_map_at_r"):
                vals = [r["scores"][name][metric] for r in runs]
                entry["scores"][f"{name}|{metric}"] = (float(np.mean(vals)), float(np.std(vals)))
        out.append(entry)
    return out
