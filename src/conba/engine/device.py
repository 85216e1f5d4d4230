"""Where a model runs and in which precision: device and dtype resolved in one place.

* device: ``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``
  (:func:`conba.settings.resolve_device`).
* dtype (inference): ``auto`` = float16 on CUDA, float32 everywhere else; ``float32``, ``float16``,
  ``bfloat16`` (bfloat16 also runs on CPUs, so tests exercise the half-precision path there).
  Half precision casts the weights (as ``model.half()`` does): that is what makes it fast on a GPU.
  It stays within :data:`HALF_COSINE_TOLERANCE` of float32 (tests/engine/test_device_dtype.py checks the
  shipped model's golden vectors in float16 and bfloat16 against it), which is why ``auto`` picks it
  on CUDA. The ONNX engines run on the CPU in float32 only.

The embedding fingerprint does not depend on either (:meth:`conba.model.ConbaModel.fingerprint`
keeps the fingerprint of the weights as loaded across a cast), so an index built on a GPU in float16 is
used on a CPU in float32 and the other way round.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch

from conba.constants import DEVICE_ENV, DTYPE_ENV, DTYPES
from conba.errors import ConfigError
from conba.settings import resolve_device

TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Vectors in half precision vs float32, the same snippets (1 - cosine), for auto to pick float16 on CUDA:
# measured on the shipped model's golden snippets (tests/engine/test_device_dtype.py)
HALF_COSINE_TOLERANCE = {torch.float16: 1e-5, torch.bfloat16: 2e-4}


@dataclass(frozen=True)
class Placement:
    """A resolved (device, dtype) pair."""

    device: torch.device
    dtype: torch.dtype

    @property
    def dtype_name(self) -> str:
        return dtype_name(self.dtype)

    def to_dict(self) -> dict[str, str]:
        return {"device": str(self.device), "dtype": self.dtype_name}


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float16`` -> ``'float16'``."""
    return str(dtype).removeprefix("torch.")


def as_device(device: str | torch.device | None) -> torch.device:
    """A torch device from a name (``auto`` resolved; None = CPU)."""
    if device is None:
        return torch.device("cpu")
    if isinstance(device, torch.device):
        return device
    return resolve_device(str(device).strip().lower())


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``auto`` (or None) -> float16 on CUDA, float32 elsewhere; a name or torch dtype as given."""
    if isinstance(dtype, torch.dtype):
        if dtype not in TORCH_DTYPES.values():
            raise ConfigError(f"unsupported inference dtype {dtype} ({', '.join(DTYPES)})")
        return dtype
    name = "auto" if dtype is None else str(dtype).strip().lower().removeprefix("torch.")
    if name == "auto":
        return torch.float16 if device.type == "cuda" else torch.float32
    if name not in TORCH_DTYPES:
        raise ConfigError(f"unknown dtype {dtype!r} ({', '.join(DTYPES)})")
    return TORCH_DTYPES[name]


def resolve_placement(device: str | torch.device | None = "auto", dtype: str | torch.dtype | None = "auto",
                      engine: str = "torch") -> Placement:
    """The (device, dtype) a model runs on. The ONNX engines run on the CPU in float32: there ``auto``
    means CPU / float32, and an explicit GPU or half precision is a one-line error."""
    if engine != "torch":
        for value, env, fine in ((device, DEVICE_ENV, ("auto", "cpu")), (dtype, DTYPE_ENV, ("auto", "float32"))):
            if getattr(value, "from_environment", False) and str(value) not in fine:  # a default, not a request
                warnings.warn(f"engine {engine!r} runs on the CPU in float32: ${env}={value} does not apply",
                              stacklevel=2)
                device, dtype = (None, dtype) if env == DEVICE_ENV else (device, None)
        if device is not None and str(device) not in ("auto", "cpu"):
            raise ConfigError(f"engine {engine!r} runs on the CPU (ONNX Runtime): use --device cpu, or "
                              f"the torch engine for {device}")
        if dtype is not None and str(dtype).removeprefix("torch.") not in ("auto", "float32"):
            raise ConfigError(f"engine {engine!r} runs in float32: --dtype {dtype} needs the torch engine")
        return Placement(torch.device("cpu"), torch.float32)
    dev = as_device(device)
    return Placement(dev, resolve_dtype(dtype, dev))


def weights_dtype(model: torch.nn.Module) -> torch.dtype:
    """The dtype of a model's first floating-point parameter (float32 when it has none)."""
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.float32


def place_model(model: Any, device: str | torch.device | None = "auto", dtype: str | torch.dtype | None = "auto",
                engine: str = "torch") -> Any:
    """Move ``model`` (in place, as ``nn.Module.to`` does) to the resolved device and dtype; returns it.
    A model loaded in half precision may run in float32 (a lossless cast), but a cast down from
    the loaded precision is one way: asking for that precision again is an error (load it again),
    since the rounded weights cannot be restored."""
    where = resolve_placement(device, dtype, engine)
    current, source = weights_dtype(model), getattr(model, "cast_from", None)
    if source is not None and where.dtype == source != current:
        raise ConfigError(f"the model's weights were cast to {dtype_name(current)}; {where.dtype_name} needs the "
                          "model loaded again (the rounded weights cannot be restored)")
    model.to(device=where.device, dtype=where.dtype)
    return model
