"""Training checkpoints shared by ``conba train``, ``conba pretrain`` and ``conba prune train``.

A checkpoint is a folder of two files, written only with safetensors and JSON (loading never unpickles):

* ``tensors.safetensors``: module weights ``{module}.{key}``, optimizer state ``optimizer.{i}.{field}``
  (AdamW moments, step counts), the torch RNG ``rng.torch`` and, when CUDA is in use, ``rng.cuda.{k}``.
* ``state.json``: the caller's JSON-able state at the top level (epoch, step, history, ...) and, under
  ``"checkpoint"``, this module's own: format, the settings ``key``, the optimizer's param groups and
  non-tensor state, the scheduler's state dict, the Python and NumPy RNG states.

The ``key`` is what must match to resume (a run signature or a settings hash); a checkpoint with another
key, or one written by an older conba, is refused with :class:`CheckpointMismatch`.

Atomic: a new checkpoint is written to ``NAME.tmp``, the current one is moved to ``NAME.old``, the new one
renamed to ``NAME`` and ``NAME.old`` removed; :func:`load_checkpoint` falls back to ``NAME.old``, so a crash
at any moment leaves the last complete checkpoint loadable. (Folders cannot be swapped in one rename, and a
single file would need the JSON inside the safetensors header, out of reach of ``jq``.)

Schedules are plain functions of the saved step (:mod:`conba.train.loop`), so none of the three loops
passes a ``scheduler``; it is here for loops that use a ``torch.optim.lr_scheduler`` object.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from conba.errors import FormatError, UsageError
from conba.model.old_names import RENAMED
from conba.utils.io import read_json, replace_dir, sibling

FORMAT = 1
TENSORS = "tensors.safetensors"
STATE = "state.json"
META = "checkpoint"  # the key in state.json that holds this module's own entries


class CheckpointMismatch(UsageError):
    """The checkpoint was made with other settings (or by an older conba): resuming it would be wrong.
    ``settings``: the names of the settings that differ (empty when unknown)."""

    def __init__(self, message: str, settings: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.settings = settings


def _jsonable(obj: Any) -> Any:
    """``obj`` as JSON would give it back (tuples become lists), so keys compare equal after a round trip."""
    return json.loads(json.dumps(obj))


def _module_tensors(modules: Mapping[str, torch.nn.Module], trainable_only: bool) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for name, module in modules.items():
        items = ([(k, p) for k, p in module.named_parameters() if p.requires_grad] if trainable_only
                 else list(module.state_dict().items()))
        for k, t in items:
            t = t.detach().cpu().contiguous()
            if t.untyped_storage().data_ptr() in seen:  # tied weights: safetensors refuses shared storage
                t = t.clone()
            seen.add(t.untyped_storage().data_ptr())
            out[f"{name}.{k}"] = t
    return out


def _optimizer_parts(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    sd = opt.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict] = {}
    for idx, fields in sd["state"].items():
        for field, value in fields.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optimizer.{idx}.{field}"] = value.detach().cpu().contiguous().clone()
            else:
                scalars.setdefault(str(idx), {})[field] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def _rng_parts() -> tuple[dict[str, torch.Tensor], dict]:
    tensors = {"rng.torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        tensors.update({f"rng.cuda.{k}": s for k, s in enumerate(torch.cuda.get_rng_state_all())})
    version, py_state, gauss = random.getstate()
    name, mt, pos, has_gauss, cached = np.random.get_state()
    return tensors, {"python": [version, list(py_state), gauss],
                     "numpy": [name, np.asarray(mt).tolist(), int(pos), int(has_gauss), float(cached)]}


def save_checkpoint(path: str | Path, key: Any, state: Mapping[str, Any], *,
                    modules: Mapping[str, torch.nn.Module], optimizer: torch.optim.Optimizer | None = None,
                    scheduler: Any = None, trainable_only: bool = False) -> None:
    """Write a checkpoint folder at ``path`` atomically (see the module docstring).

    ``key``: JSON-able settings that must match on load. ``state``: the loop's JSON-able position and
    history. ``modules``: named modules whose weights are saved (only parameters with ``requires_grad``
    when ``trainable_only``, else the whole state dict, buffers included)."""
    from safetensors.torch import save_file

    path = Path(path)
    if META in state:
        raise ValueError(f"checkpoint state may not use the reserved key {META!r}")
    tensors = _module_tensors(modules, trainable_only)
    meta: dict[str, Any] = {"format": FORMAT, "key": _jsonable(key), "trainable_only": trainable_only}
    if optimizer is not None:
        opt_tensors, meta["optimizer"] = _optimizer_parts(optimizer)
        tensors.update(opt_tensors)
    if scheduler is not None:
        meta["scheduler"] = scheduler.state_dict()
    rng_tensors, meta["rng"] = _rng_parts()
    tensors.update(rng_tensors)
    try:
        text = json.dumps({**state, META: meta}, indent=2) + "\n"
    except TypeError as exc:
        raise ValueError(f"{path}: checkpoint state is not JSON-able ({exc})") from None
    tmp = sibling(path, ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_file(tensors, str(tmp / TENSORS))
    (tmp / STATE).write_text(text, encoding="utf-8")  # last: a folder with state.json is complete
    if path.exists() and not (path / STATE).exists():  # incomplete: not worth keeping as NAME.old
        shutil.rmtree(path, ignore_errors=True)
    replace_dir(tmp, path)


def find_checkpoint(path: str | Path) -> Path | None:
    """The complete checkpoint folder for ``path``: ``path`` itself, else ``path.old`` (a crash mid-swap)."""
    path = Path(path)
    for folder in (path, sibling(path, ".old")):
        if (folder / STATE).is_file():  # written last: the folder is complete
            return folder
    return None


def remove_checkpoint(path: str | Path) -> None:
    """Delete the checkpoint at ``path`` and any ``.tmp`` / ``.old`` left by a crash."""
    path = Path(path)
    for folder in (path, sibling(path, ".tmp"), sibling(path, ".old")):
        shutil.rmtree(folder, ignore_errors=True)


def settings_diff(saved: Any, wanted: Any, limit: int = 3) -> tuple[tuple[str, ...], str]:
    """The settings that keep a checkpoint from resuming, and their words for its error line:
    ``(("lr",), " (lr: 0.1 saved, 0.2 now)")``, at most ``limit`` of them spelled out; nothing when the
    keys are not both mappings."""
    saved, wanted = _jsonable(saved), _jsonable(wanted)
    if not isinstance(saved, dict) or not isinstance(wanted, dict):
        return (), ""
    missing = object()
    names = tuple(k for k in sorted(set(saved) | set(wanted)) if saved.get(k, missing) != wanted.get(k, missing))
    said = [f"{k}: {_short(saved.get(k, missing))} saved, {_short(wanted.get(k, missing))} now" for k in names[:limit]]
    more = f", and {len(names) - limit} more" if len(names) > limit else ""
    return names, (f" ({'; '.join(said)}{more})" if names else "")


def _short(value: Any, width: int = 40) -> str:
    text = "unset" if not isinstance(value, (type(None), bool, int, float, str, list, dict)) else json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_checkpoint(path: str | Path, key: Any) -> bool:
    """True when a checkpoint is there to resume with ``key``, False when there is none; raises
    :class:`CheckpointMismatch` as :func:`load_checkpoint` would, without loading a tensor (so a run can
    refuse a foreign checkpoint before its slow set-up)."""
    folder = find_checkpoint(path)
    if folder is not None:
        _checked_state(folder, key)
    return folder is not None


def _checked_state(folder: Path, key: Any) -> tuple[dict, dict]:
    state = read_json(folder / STATE)
    meta = state.pop(META, None) if isinstance(state, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointMismatch(f"{folder}: checkpoint was written by another conba version; use --restart "
                                 "to discard it or another --out")
    if meta.get("key") != _jsonable(key):
        names, said = settings_diff(meta.get("key"), key)
        raise CheckpointMismatch(f"{folder}: checkpoint was made with different settings{said}; use --restart "
                                 "to discard it or another --out", names)
    return state, meta


def load_checkpoint(path: str | Path, key: Any, *, modules: Mapping[str, torch.nn.Module],
                    optimizer: torch.optim.Optimizer | None = None, scheduler: Any = None,
                    trainable_only: bool = False, restore_rng: bool = True) -> dict | None:
    """Restore weights, optimizer, scheduler and RNG states in place; return the saved state, or None
    when there is no checkpoint. Raises :class:`CheckpointMismatch` when it was made with another ``key``."""
    from safetensors.torch import load_file

    folder = find_checkpoint(path)
    if folder is None:
        return None
    state, meta = _checked_state(folder, key)
    tensors = load_file(str(folder / TENSORS))
    _restore_modules(folder, tensors, modules, trainable_only)
    if optimizer is not None:
        _restore_optimizer(folder, tensors, meta, optimizer)
    if scheduler is not None:
        scheduler.load_state_dict(meta["scheduler"])
    if restore_rng:
        _restore_rng(tensors, meta["rng"])
    return state


def _restore_modules(folder: Path, tensors: dict[str, torch.Tensor], modules: Mapping[str, torch.nn.Module],
                     trainable_only: bool) -> None:
    for name, module in modules.items():
        prefix = name + "."
        saved = {_current_name(k[len(prefix):]): v for k, v in tensors.items() if k.startswith(prefix)}
        if not trainable_only:
            module.load_state_dict(saved)
            continue
        params = {k: p for k, p in module.named_parameters() if p.requires_grad}
        if set(saved) != set(params):
            raise FormatError(f"{folder / TENSORS}: trainable parameters of {name!r} differ from the model's "
                              f"({sorted(set(saved) ^ set(params))[:3]} ...)")
        with torch.no_grad():
            for k, p in params.items():
                p.copy_(saved[k])


def _current_name(key: str) -> str:
    """A parameter's name today: checkpoints written before the long-input rename name ConbaModel's window head
    by its old name (:data:`conba.model.old_names.RENAMED`)."""
    parts = key.split(".")
    return ".".join([RENAMED.get(p, p) for p in parts[:-1]] + parts[-1:])


def _restore_optimizer(folder: Path, tensors: dict[str, torch.Tensor], meta: dict,
                       opt: torch.optim.Optimizer) -> None:
    if "optimizer" not in meta:
        raise FormatError(f"{folder / STATE}: the checkpoint holds no optimizer state")
    saved = meta["optimizer"]
    state: dict[int, dict] = {int(i): dict(fields) for i, fields in saved["scalars"].items()}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            idx, field = name[len("optimizer."):].split(".", 1)
            state.setdefault(int(idx), {})[field] = value
    fresh = opt.state_dict()["param_groups"]
    if len(fresh) != len(saved["param_groups"]):
        raise FormatError(f"{folder / STATE}: {len(saved['param_groups'])} optimizer param groups saved, "
                          f"the optimizer has {len(fresh)}")
    groups = [{k: tuple(v) if isinstance(cur.get(k), tuple) else v for k, v in g.items()}  # JSON made betas a list
              for g, cur in zip(saved["param_groups"], fresh)]
    opt.load_state_dict({"state": state, "param_groups": groups})


def _restore_rng(tensors: dict[str, torch.Tensor], rng: dict) -> None:
    torch.set_rng_state(tensors["rng.torch"])
    cuda = [tensors[f"rng.cuda.{k}"] for k in range(sum(n.startswith("rng.cuda.") for n in tensors))]
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    version, py_state, gauss = rng["python"]
    random.setstate((version, tuple(py_state), gauss))
    name, mt, pos, has_gauss, cached = rng["numpy"]
    np.random.set_state((name, np.asarray(mt, dtype=np.uint32), pos, has_gauss, cached))
