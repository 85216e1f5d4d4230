"""``conba prune train``: SDTP stage 1 (saliency) and stage 2 (scorer training) for a conba model.

Glossary: b batch (P×K snippets), l tokens, d hidden width.

1. P×K batches of clone groups are drawn from the training files (``limit`` snippets in all).
2. Saliency pass: the frozen model's contrastive loss is back-propagated to the hidden states entering
   each pruning layer (hooks, :mod:`conba.prune.saliency`); results are saved after every batch in
   OUT/prune_training/saliency.safetensors, so an interrupted run resumes.
3. Scorer training, backbone and head frozen: the soft pass (:func:`conba.prune.soft.soft_states`)
   applies Gumbel-softmax keep weights through the attention mask and the pooling;
   loss = w_task · contrastive + w_mse · MSE(keep prob, normalised saliency)
   + w_rank · pairwise ranking(keep score, saliency), the last two averaged over pruning layers.
   Scorers, AdamW state and position are saved after every batch in OUT/prune_training/checkpoint
   (:mod:`conba.train.checkpoint`), so a run resumes mid-epoch; changed scorer settings start it over.
4. The model is saved to OUT with the scorers in OUT/prune/; its encode() prunes.
"""

from __future__ import annotations

import math
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from conba.encoder.layers import embed_input, require_own_loop, run_layers
from conba.encoder.sdtp.config import PruneConfig
from conba.encoder.sdtp.scorer import PruneModule, keep_score
from conba.engine.batching import pad_batch, pad_token_id
from conba.errors import ConfigError
from conba.heads.prefix import require_no_prefix
from conba.prune.losses import normalize_saliency, ranking_loss, score_mse
from conba.prune.saliency import batch_saliency, importance
from conba.prune.soft import soft_states, weighted_mean
from conba.prune.store import SaliencyStore
from conba.prune.train_config import PruneTrainConfig, default_layers
from conba.train.checkpoint import CheckpointMismatch, load_checkpoint, save_checkpoint
from conba.train.loop import optimizer_step, progress_line
from conba.train.losses import in_batch_loss

WORK = "prune_training"
CHECKPOINT = "checkpoint"  # scorer training's checkpoint folder in WORK (conba.train.checkpoint)


def select_batches(records, cfg: PruneTrainConfig) -> list[list[int]]:
    """P×K batches (record indices) covering about ``cfg.limit`` snippets, seeded."""
    from conba.train.sampler import GroupBatchSampler

    sampler = GroupBatchSampler([r.group for r in records], [r.language for r in records],
                                p=cfg.groups_per_batch, k=cfg.per_group, seed=cfg.seed)
    want = math.ceil(cfg.limit / (cfg.groups_per_batch * cfg.per_group))
    batches: list[list[int]] = []
    epoch = 0
    while len(batches) < want:
        batches += sampler.epoch(epoch)
        epoch += 1
    return batches[:want]


def _cap_records(records, per: int, seed: int):
    if per <= 0:
        return records
    rng = random.Random(seed)
    by_key: dict[tuple[str, str], list] = {}
    for r in records:
        by_key.setdefault((r.group, r.language), []).append(r)
    out = []
    for key in sorted(by_key):
        rs = by_key[key]
        out += rs if len(rs) <= per else rng.sample(rs, per)
    return out


def _temperature(model, cfg: PruneTrainConfig) -> float:
    if cfg.temperature > 0:
        return cfg.temperature
    return float((model.info.get("train_config") or {}).get("temperature") or 0.05)


def saliency_pass(model, records, batches, cfg: PruneTrainConfig, layers: list[int], path: Path,
                  log: Callable[[str], None], progress: bool) -> SaliencyStore:
    key = cfg.saliency_key()
    store = SaliencyStore(layers, key)
    sources = [path] + ([Path(cfg.saliency_from) / WORK / path.name] if cfg.saliency_from else [])
    for src in sources:
        if not src.exists():
            if src != path:
                raise FileNotFoundError(f"{src}: no saliency pass to reuse (--saliency-from)")
            continue
        old = SaliencyStore.load(src)
        if old.key == key and set(layers) <= set(old.layers) and (src == path or len(old) == len(batches)):
            store = old.subset(layers)
            log(f"saliency: {'resuming after' if src == path else f'reusing {src}:'} {len(store)}/{len(batches)} "
                f"batches")
            if src != path:
                store.save(path)
            break
        if src != path:
            raise ConfigError(f"{src}: its saliency pass used other settings or layers {old.layers}; "
                             f"cannot reuse it for layers {layers}")
    from tqdm.auto import tqdm

    temperature = _temperature(model, cfg)
    t0 = time.time()
    for b in tqdm(range(len(store), len(batches)), desc="saliency", unit="batch", disable=not progress):
        rows = batches[b]
        gmap: dict[str, int] = {}
        groups = [gmap.setdefault(records[i].group, len(gmap)) for i in rows]
        ids, sal = batch_saliency(model, [records[i].code for i in rows], [records[i].language for i in rows],
                                  groups, layers, temperature, cfg.loss)
        store.add(rows, ids, sal)
        store.save(path)
    if len(batches) > 0 and time.time() - t0 > 1:
        log(f"saliency: {len(batches)} batches in {time.time() - t0:.0f}s")
    return store


def _frozen(model) -> None:
    for p in model.parameters():
        p.requires_grad_(False)


def _targets(sal: list[np.ndarray], width: int, mask: torch.Tensor, mode: str) -> torch.Tensor:
    raw = torch.zeros(len(sal), width)
    for row, s in enumerate(sal):
        raw[row, : len(s)] = torch.from_numpy(np.asarray(s))
    return normalize_saliency(importance(raw, mode), mask)


def _overlap_at_k(scores: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, ratio: float) -> float:
    """Mean share of the target's top ceil(ratio·n) tokens that the scores also put in their top."""
    vals = []
    for row in range(scores.shape[0]):
        n = int(mask[row].sum())
        k = max(1, math.ceil(ratio * n))
        if k >= n:
            continue
        a = set(torch.topk(scores[row, :n], k).indices.tolist())
        b = set(torch.topk(target[row, :n], k).indices.tolist())
        vals.append(len(a & b) / k)
    return float(np.mean(vals)) if vals else float("nan")


def train_step(model, pruner: PruneModule, input_ids: torch.Tensor, mask: torch.Tensor,
               lang_ids: torch.Tensor, groups: torch.Tensor, targets: dict[int, torch.Tensor],
               cfg: PruneTrainConfig, temperature: float) -> tuple[dict[str, torch.Tensor], dict[int, torch.Tensor]]:
    """Losses of one batch (not yet backpropagated) and the scorer logits {p: (b, l, 2)}.

    Args: input_ids, mask: (b, l); lang_ids, groups: (b,); targets: {p: (b, l)} in [0, 1].
    """
    backbone, start = model.backbone, pruner.config.layers[0]
    with torch.no_grad():  # layers below the first pruning layer never see a mask: run them once, no grad
        hidden, _ = run_layers(backbone.layers, embed_input(backbone, input_ids), mask, 0, start)
    sp = soft_states(backbone, pruner, hidden, mask, start, tau=cfg.tau)
    head = model.head
    if head.needs_tokens or head.config.pooling != "mean":
        emb = head(sp.hidden, mask, lang_ids)
    else:
        emb = head(weighted_mean(sp.hidden, sp.weights), None, lang_ids)
    task = in_batch_loss(emb, groups, temperature, cfg.loss)
    distill = emb.new_zeros(())
    if cfg.w_distill > 0:  # keep the pruned embedding close to the exact one
        with torch.no_grad():
            exact_h, _ = run_layers(backbone.layers, hidden, mask, start)
            exact = head(exact_h, mask.bool(), lang_ids)
        distill = (1 - torch.nn.functional.cosine_similarity(emb, exact, dim=-1)).mean()
    mse = torch.stack([score_mse(torch.sigmoid(keep_score(sp.logits[p])), targets[p], mask) for p in sp.logits])
    rank = torch.stack([ranking_loss(keep_score(sp.logits[p]), targets[p], mask) for p in sp.logits])
    total = cfg.w_task * task + cfg.w_mse * mse.mean() + cfg.w_rank * rank.mean() + cfg.w_distill * distill
    losses = {"loss": total, "task": task, "mse": mse.mean(), "rank": rank.mean(), "distill": distill,
              "soft_keep": (sp.weights.sum(1) / mask.sum(1)).mean()}
    return losses, sp.logits


def train_scorers(model, pruner: PruneModule, records, store: SaliencyStore, cfg: PruneTrainConfig, work: Path,
                  log: Callable[[str], None], progress: bool) -> list[dict]:
    """Stage 2. Checkpoints after every batch (weights, AdamW state, position); resumes mid-epoch."""
    _frozen(model)
    pruner.train()
    for p in pruner.parameters():
        p.requires_grad_(True)
    opt = torch.optim.AdamW(pruner.parameters(), lr=cfg.lr, weight_decay=0.0)
    key = cfg.scorer_key()
    try:
        state = load_checkpoint(work / CHECKPOINT, key, modules={"scorers": pruner}, optimizer=opt)
    except CheckpointMismatch:  # other scorer settings: train from scratch (the saliency pass is kept)
        state = None
    state = state or {"epoch": 0, "done": 0, "sums": {}, "overlap": [], "seconds": 0.0, "history": []}
    if state["epoch"] or state["done"]:
        log(f"scorers: resuming at epoch {state['epoch'] + 1}, batch {state['done']}")
    temperature = _temperature(model, cfg)
    pad = pad_token_id(model.backbone.tokenizer)
    from tqdm.auto import tqdm

    t_start = time.time()
    while state["epoch"] < cfg.epochs:
        epoch = state["epoch"]
        order = list(range(len(store)))
        random.Random(cfg.seed + epoch).shuffle(order)
        bar = tqdm(total=len(order), initial=state["done"], desc=f"scorers epoch {epoch + 1}/{cfg.epochs}",
                   unit="batch", disable=not progress)
        losses: list[float] = []
        for pos in range(state["done"], len(order)):
            t0 = time.time()
            torch.manual_seed(cfg.seed * 7919 + epoch * 100_003 + pos)  # Gumbel noise: same after a resume
            recs, ids, sal = store.batches[order[pos]]
            input_ids, mask = pad_batch(ids, pad)
            gmap: dict[str, int] = {}
            groups = torch.tensor([gmap.setdefault(records[i].group, len(gmap)) for i in recs])
            lang_ids = model.head.language_ids([records[i].language for i in recs])
            targets = {p: _targets(sal[p], input_ids.shape[1], mask, cfg.saliency) for p in pruner.config.layers}
            dev = model.device  # --device: the batch goes where the model is
            input_ids, mask, lang_ids, groups = (t.to(dev) for t in (input_ids, mask, lang_ids, groups))
            targets = {p: t.to(dev) for p, t in targets.items()}
            out, logits = train_step(model, pruner, input_ids, mask, lang_ids, groups, targets, cfg, temperature)
            optimizer_step(opt, out["loss"])  # no gradient clipping here, as before the loops were merged
            for k, v in out.items():
                state["sums"][k] = state["sums"].get(k, 0.0) + float(v.detach())
            p0 = pruner.config.layers[0]  # its states are exact (no mask below it): a clean accuracy check
            state["overlap"].append(_overlap_at_k(keep_score(logits[p0].detach()), targets[p0], mask, cfg.keep_ratio))
            state["done"] = pos + 1
            state["seconds"] += time.time() - t0
            save_checkpoint(work / CHECKPOINT, key, state, modules={"scorers": pruner}, optimizer=opt)
            bar.update(1)
            losses.append(float(out["loss"].detach()))
            if not progress:  # no bar (a log file, a background job): one line per checkpoint (every batch)
                log("scorers: " + progress_line(f"{epoch + 1}/{cfg.epochs}", pos + 1, len(order), losses,
                                                opt.param_groups[0]["lr"], time.time() - t_start))
        bar.close()
        n = max(1, len(order))
        row = {"epoch": epoch + 1, **{k: round(v / n, 5) for k, v in state["sums"].items()},
               "top_k_overlap_first_layer": round(float(np.nanmean(state["overlap"] or [np.nan])), 4),
               "seconds": round(state["seconds"], 1)}
        state["history"].append(row)
        log("scorers: " + " ".join(f"{k}={v}" for k, v in row.items()))
        state.update(epoch=epoch + 1, done=0, sums={}, overlap=[], seconds=0.0)
        save_checkpoint(work / CHECKPOINT, key, state, modules={"scorers": pruner}, optimizer=opt)
    pruner.eval()
    for p in pruner.parameters():
        p.requires_grad_(False)
    return list(state["history"])


def viewed_records(records: list, rows: list[int], view: str, log: Callable[[str], None]) -> list:
    """The records with the model's input view applied to the snippets that are used (``rows``), so the
    scorers learn on the text encode() will see."""
    if view == "raw":
        return records
    import dataclasses

    from conba.syntax.view import apply_views

    codes, stats = apply_views([records[i].code for i in rows], [records[i].language for i in rows], view)
    out = list(records)
    for i, code in zip(rows, codes):
        out[i] = dataclasses.replace(records[i], code=code)
    log(f"input view {view}: {stats.chars_before} -> {stats.chars_after} chars, "
        f"{stats.fallbacks} of {stats.snippets} snippets raw")
    return out


def train_pruner(cfg: PruneTrainConfig, restart: bool = False, log: Callable[[str], None] = print,
                 progress: bool = False, device: str = "cpu") -> Path:
    """Run SDTP stages 1 and 2 for ``cfg.model`` on ``device`` (auto, cpu, cuda[:N], mps; float32) and
    save the pruning model to ``cfg.out``."""
    from conba.data import load_many
    from conba.model import load_model

    cfg.validate()
    out = Path(cfg.out)
    work = out / WORK
    if restart:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(cfg.seed)
    model = load_model(cfg.model, prune=False, device=device, dtype="float32")
    model.pruner = None
    model.eval()
    require_own_loop(model.backbone, "SDTP pruning")
    require_no_prefix(model.head, "SDTP pruning")
    layers = list(cfg.layers) or default_layers(model.backbone.num_layers)
    cfg.layers = layers
    pcfg = PruneConfig(layers=layers, keep_ratio=cfg.keep_ratio, keep_first=cfg.keep_first, keep_tail=cfg.keep_tail,
                       dim=model.backbone.hidden_size, tau=cfg.tau, num_layers=model.backbone.num_layers,
                       base_fingerprint=model.fingerprint()).validate()
    for f in cfg.train:
        if not Path(f).exists():
            raise FileNotFoundError(f"{f}: training file not found (pass --data FILE)")
    cfg.save(work / "config.json")
    records = _cap_records(load_many(cfg.train), cfg.max_per_group_language, cfg.seed)
    batches = select_batches(records, cfg)
    records = viewed_records(records, sorted({i for b in batches for i in b}), model.view, log)
    log(f"SDTP for {cfg.model} (fingerprint {pcfg.base_fingerprint}): layers {layers}, keep ratio "
        f"{cfg.keep_ratio}, {sum(len(b) for b in batches)} snippets in {len(batches)} batches")
    store = saliency_pass(model, records, batches, cfg, layers, work / "saliency.safetensors", log, progress)
    pruner = PruneModule(pcfg).to(model.device)
    history = train_scorers(model, pruner, records, store, cfg, work, log, progress)
    pruner.config.info = {"train": cfg.to_dict(), "history": history,
                          "snippets": sum(len(b) for b in batches)}
    model.pruner = pruner
    model.use_pruning = True
    model.cpu().save(out)
    log(f"saved {out} (pruning on; load_model('{out}', prune=False) turns it off)")
    return out
