"""``load_model``: the shipped ``default`` (and ``default-sdtp``, and ``default-fast``: its distilled
student with fewer layers), ``zero-shot``, a conba model folder or a bare Hugging Face encoder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conba.encoder.backbone import BackboneError
from conba.model.core import CONFIG_NAME, DEFAULT_FAST_DIR, DEFAULT_MODEL_DIR, DEFAULT_SDTP_DIR, ConbaModel, ModelError
from conba.utils.io import existing_dir

SHIPPED_NAMES = ("default", "default-fast", "default-sdtp", "zero-shot")


def load_model(name_or_path: str | Path = "default", prune: bool = True, *, device: str | None = None,
               dtype: str | None = None, pooling: str | None = None, trust_remote_code: bool = False) -> ConbaModel:
    """Load a conba model folder, the shipped ``default``, or a bare HF encoder (``zero-shot``:
    backbone + mean pooling, no trained head). ``prune=False`` turns off an attached SDTP pruner
    (``encode`` then gives the exact embeddings of the model without it). ``device`` (auto, cpu,
    cuda[:N], mps) and ``dtype`` (auto, float32, float16, bfloat16) place it
    (:func:`conba.engine.device.place_model`); neither: the CPU in float32, as it loads; one of them:
    the other is ``auto``, as on the command line (``--dtype float16`` alone runs on a GPU if there is one).
    ``pooling`` overrides a bare model's read-out (mean, cls, max, lasttoken, weightedmean; default: its
    sentence-transformers Pooling module, else the architecture's: the last token for decoders).
    ``trust_remote_code`` lets a backbone run code from its folder (never the default; a model folder
    saved with it asks for it again)."""
    model = _load_model(name_or_path, pooling or "", bool(trust_remote_code))
    model.use_pruning = bool(prune)
    if device is not None or dtype is not None:
        from conba.engine.device import place_model

        place_model(model, device or "auto", dtype or "auto")
    return model


def _load_model(name_or_path: str | Path, pooling: str = "", trust_remote_code: bool = False) -> ConbaModel:
    name = str(name_or_path)
    bare: dict[str, Any] = {"pooling": pooling, "trust_remote_code": trust_remote_code}
    if pooling and (name in ("default", "default-fast", "default-sdtp") or (Path(name) / CONFIG_NAME).exists()):
        raise ModelError(f"--pooling applies to a bare Hugging Face or sentence-transformers model, not to the conba "
                         f"model '{name}' (its read-out is part of it)")
    shipped = {"default": (DEFAULT_MODEL_DIR, "default model"),
               "default-fast": (DEFAULT_FAST_DIR, "student model")}  # its 3-layer student (conba distill)
    if name in shipped:
        folder, what = shipped[name]
        if not (folder / CONFIG_NAME).exists():
            raise ModelError(f"the shipped {what} is missing from {folder}; reinstall conba")
        return ConbaModel.load(folder)
    if name == "default-sdtp":  # the default model with its shipped SDTP token pruner
        model = _load_model("default")
        from conba.encoder.sdtp.scorer import load_pruner

        try:
            model.pruner = load_pruner(DEFAULT_SDTP_DIR)
        except (FileNotFoundError, ValueError) as exc:
            raise ModelError(f"the shipped SDTP pruner is missing or corrupt ({exc}); reinstall conba") from None
        return model
    if name == "zero-shot":
        return ConbaModel.create("default", **bare)
    path = existing_dir(name)  # a model folder whose replacement crashed half-way: its NAME.old
    if (path / CONFIG_NAME).exists():
        return ConbaModel.load(path, trust_remote_code)
    if path.exists() and not (path / "config.json").exists():
        raise ModelError(f"{path}: neither a conba model folder nor a Hugging Face model folder")
    if not path.exists():  # a typo of a shipped name is no hub id: say so now, not after the hub's retries
        import difflib

        close = difflib.get_close_matches(name, SHIPPED_NAMES, n=1, cutoff=0.75)
        if close:
            raise ModelError(f"unknown model '{name}': no such folder; did you mean '{close[0]}'? "
                             f"(shipped: {', '.join(SHIPPED_NAMES)})")
    try:
        return ConbaModel.create(name, **bare)
    except BackboneError as exc:
        raise ModelError(str(exc)) from None
