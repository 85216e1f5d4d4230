"""conba: find functionally equivalent code across programming languages.

>>> import conba
>>> model = conba.load_model()            # the shipped default, offline
>>> emb = model.encode(["def add(a, b): return a + b"], languages=["python"])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conba.client import Client
    from conba.model import ConbaModel
    from conba.plagiarism.check import check as check_plagiarism

__all__ = ["Client", "ConbaModel", "check_plagiarism", "load_model", "__version__"]


def load_model(name_or_path: str = "default", prune: bool = True, *, device: str | None = None,
               dtype: str | None = None, pooling: str | None = None, trust_remote_code: bool = False) -> ConbaModel:
    """Load the shipped ``default`` model, ``zero-shot``, a conba model folder or an HF encoder.
    ``prune=False`` turns off an attached SDTP token pruner (exact embeddings). ``device`` (auto,
    cpu, cuda[:N], mps) and ``dtype`` (auto = float16 on CUDA, float32, float16, bfloat16) place it;
    neither: the CPU in float32; one of them: the other is auto, as on the command line. ``pooling``
    overrides a bare model's read-out; ``trust_remote_code``
    lets a backbone run its folder's code (never the default)."""
    from conba.utils.status import note

    note(f"loading model {name_or_path} (torch and its weights: seconds to a minute on a small CPU)")
    from conba.model import load_model as _load

    return _load(name_or_path, prune=prune, device=device, dtype=dtype, pooling=pooling,
                 trust_remote_code=trust_remote_code)


def __getattr__(name: str) -> Any:  # lazy, so `import conba` stays light
    if name == "__version__":  # from the installed package's metadata (pyproject.toml), not a copy
        from conba.utils.versions import package_version

        return package_version("conba") or "0+unknown"
    if name == "ConbaModel":
        from conba.model import ConbaModel

        return ConbaModel
    if name == "Index":
        from conba.index import Index

        return Index
    if name == "check_plagiarism":  # no model, no torch
        from conba.plagiarism.check import check

        return check
    if name == "Client":  # the `conba serve` client: httpx only, no torch
        from conba.client import Client

        return Client
    raise AttributeError(name)
