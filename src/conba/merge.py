"""Weight-space ensembles (WiSE-FT, Wortsman et al. 2022): interpolate a fine-tuned model with the
model it was fine-tuned from.

``merge(finetuned, base, alpha)`` returns a model whose every backbone and head tensor is
``alpha * finetuned + (1 - alpha) * base``. Fine-tuning on contest code (where names mean nothing)
taught the shipped model to ignore names and docs; interpolating towards the untuned encoder gets
part of that back while keeping part of what the fine-tuning bought (docs/BENCHMARKS.md measures
the trade-off on the curated dev sets and on real repositories).

The base of a model with a ``linear`` head is the untuned backbone with the identity linear head,
which gives exactly the untuned model's (mean-pooled) vectors.
"""

from __future__ import annotations

import copy

import torch

from conba.errors import ConfigError
from conba.heads import HeadConfig, build_head
from conba.model import ConbaModel, ModelError


def untuned_counterpart(model: ConbaModel) -> ConbaModel:
    """The model ``model`` was fine-tuned from: its base backbone reloaded and a freshly initialised
    head of the same configuration (identity for ``linear``)."""
    own = model.backbone.config  # the same read-out (pooling override) and remote-code opt-in
    base = ConbaModel.create(own.name_or_path, pooling=own.pooling, trust_remote_code=own.trust_remote_code)
    cfg = HeadConfig.from_dict(model.head.config.to_dict())
    base.head = build_head(cfg)
    base.backbone.config = copy.deepcopy(model.backbone.config)
    return base


def merge(finetuned: ConbaModel, base: ConbaModel | None = None, alpha: float = 0.5) -> ConbaModel:
    """``alpha * finetuned + (1 - alpha) * base`` for every tensor (``base``: the untuned
    counterpart by default). ``alpha`` 1 is the fine-tuned model, 0 the base."""
    if not 0.0 <= alpha <= 1.0:
        raise ConfigError(f"alpha must be in [0, 1], got {alpha}")
    base = base if base is not None else untuned_counterpart(finetuned)
    out = copy.deepcopy(finetuned)
    for part in ("backbone", "head"):
        ft_state = getattr(finetuned, part).state_dict()
        base_state = getattr(base, part).state_dict()
        if set(ft_state) != set(base_state) or any(ft_state[k].shape != base_state[k].shape for k in ft_state):
            raise ModelError(f"cannot merge: the two models' {part}s have different tensors or shapes")
        mixed = {}
        for key, value in ft_state.items():
            if value.is_floating_point():
                mixed[key] = torch.lerp(base_state[key].to(value.dtype), value, alpha)
            else:  # integer buffers (position ids): must agree
                mixed[key] = value
        getattr(out, part).load_state_dict(mixed)
    out.info = {**finetuned.info, "merged": {"alpha": alpha, "base": base.backbone.config.name_or_path,
                                             "finetuned_fingerprint": finetuned.fingerprint()}}
    out.threshold = None  # the thresholds were calibrated for the fine-tuned model, not the merge
    out.clone_threshold = None
    out.pruner = None  # a pruner was trained for the fine-tuned weights, not the merge
    return out


def drop_head(model: ConbaModel) -> ConbaModel:
    """``model`` with its head replaced by plain masked-mean pooling (kind ``none``), in place.

    The shipped default is the α 0.5 merge read this way: the merged linear head, tuned together with
    the contest-tuned backbone, cost 8 points of MAP@R on real repositories and 2 on atcoder_dev
    (docs/BENCHMARKS.md, "The shipped default model")."""
    from conba.heads.prefix import require_no_prefix

    require_no_prefix(model.head, "dropping the head")
    model.head = build_head(HeadConfig(kind="none", dim=model.backbone.output_dim))
    model.info = {**model.info, "head_dropped": True}
    return model
