"""The best checkpoints out of the GPU machine, and back into conba model folders here.

Out (:func:`export_run`, on the GPU machine): a run's model folder as one uncompressed tar,
``NAME.ckpt.tar``: its ``conba_config.json`` and ``head/``, the trained backbone tensors as
``backbone.tp`` (:mod:`tensor_pack`: the tensors that differ from the untuned float16 base, stored against
it, about 12-14 MB for six trained layers instead of 21 MB), and ``export.json`` (the tensors' names, four
dev snippets and the vectors the model gave them there). What comes back from the GPU machine is at most 16 MiB a
file, so a larger tar is split into ``NAME.ckpt.tar.part0``, ``.part1``, ...

Back (:func:`import_run`, here): the untuned base here (the embedded MiniLM, or a given folder), its
trained tensors replaced by the decoded ones, saved with ``ConbaModel.save`` in float16 (for the
embedded base: a delta over it, as the shipped default is stored), loadable by ``conba.load_model``.
The frozen tensors come from the real base in full precision, not from the pack's float16 copy
(whose unused vocabulary rows were zero), so the vectors differ from the GPU's by rounding only:
the import reports the largest difference on the probe snippets.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import torch

from conba.errors import UsageError
from conba.utils.saved import read_tensors, write_tensors
from conba_research.gpu_train import tensor_pack
from conba_research.gpu_train.pack import WEIGHTS

PART_BYTES = 15 * 2**20


def _probe_vectors(model, probes: list[list[str]]) -> list[list[float]]:
    vecs = model.encode([c for c, _ in probes], languages=[lang for _, lang in probes])
    return np.asarray(vecs, dtype=np.float32).round(6).tolist()


def export_run(model_dir: Path, base_dir: Path, out: Path, name: str, probes: list[list[str]]) -> list[Path]:
    """Write ``out/NAME.ckpt.tar`` (or its parts) for the saved run ``model_dir`` trained from the
    float16 base folder ``base_dir``; returns the files written. ``probes``: [code, language] pairs from
    the run's data (their tokens are in the pack), encoded here and again by :func:`import_run`."""
    from conba.model import load_model

    model = load_model(str(model_dir))
    base = read_tensors(base_dir / WEIGHTS)
    trained = {k: v.detach().cpu() for k, v in model.backbone.model.state_dict().items()}
    trained = {k: v.half() if v.is_floating_point() else v for k, v in trained.items()}
    changed = {k: v for k, v in trained.items() if k not in base or not torch.equal(v, base[k])}
    blob = tensor_pack.encode(changed, {k: v for k, v in base.items() if v.dtype == torch.float16})
    manifest = {"format": "conba-gpu-train-checkpoint", "name": name, "changed": sorted(changed),
                "probes": probes, "vectors": _probe_vectors(model, probes)}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        def add(arcname: str, data: bytes) -> None:
            info = tarfile.TarInfo(arcname)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        add("conba_config.json", (model_dir / "conba_config.json").read_bytes())
        for path in sorted((model_dir / "head").iterdir()):
            add(f"head/{path.name}", path.read_bytes())
        add("backbone.tp", blob)
        add("export.json", json.dumps(manifest).encode())
    data = buffer.getvalue()
    out.mkdir(parents=True, exist_ok=True)
    if len(data) <= PART_BYTES:
        target = out / f"{name}.ckpt.tar"
        target.write_bytes(data)
        return [target]
    parts = []
    for i, start in enumerate(range(0, len(data), PART_BYTES)):
        parts.append(out / f"{name}.ckpt.tar.part{i}")
        parts[-1].write_bytes(data[start:start + PART_BYTES])
    return parts


def checkpoint_bytes(path: Path) -> bytes:
    """The tar of ``NAME.ckpt.tar``, or of its parts (``path`` is the tar's name either way)."""
    if path.is_file():
        return path.read_bytes()
    parts = sorted(path.parent.glob(path.name + ".part*"), key=lambda p: int(p.name.rsplit("part", 1)[1]))
    if not parts:
        raise UsageError(f"{path}: no such checkpoint (nor its .part0, .part1, ...)")
    return b"".join(p.read_bytes() for p in parts)


def import_run(path: Path, out: Path, base: str = "default") -> dict:
    """Rebuild the conba model folder ``out`` from ``NAME.ckpt.tar`` (see the module docstring); returns
    ``{"out", "fingerprint", "probe_max_difference"}``. ``base``: the untuned backbone the run started
    from ("default": the embedded MiniLM; else its Hugging Face folder)."""
    from conba.encoder.backbone import EMBEDDED_NAME, embedded_model_path, is_embedded
    from conba.model import ConbaModel

    folder = embedded_model_path() if is_embedded(base) else Path(base)
    tmp = out.parent / f".{out.name}.import"
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(checkpoint_bytes(path))) as tar:
        tar.extractall(tmp, filter="data")
    try:
        manifest = json.loads((tmp / "export.json").read_text())
        real = read_tensors(folder / WEIGHTS)
        halves = {k: v.half() for k, v in real.items() if v.is_floating_point()}
        trained = tensor_pack.read(tmp / "backbone.tp", halves)
        state = {**real, **{k: v.to(real[k].dtype) if k in real else v for k, v in trained.items()}}
        (tmp / "backbone").mkdir()
        for item in folder.iterdir():
            if item.is_file() and item.suffix not in (".safetensors", ".bin"):
                shutil.copy2(item, tmp / "backbone" / item.name)
            elif item.is_dir():
                shutil.copytree(item, tmp / "backbone" / item.name)
        write_tensors(tmp / "backbone" / WEIGHTS, state)
        config = json.loads((tmp / "conba_config.json").read_text())
        config.update(backbone_storage="full", fingerprint=None)
        (tmp / "conba_config.json").write_text(json.dumps(config))
        model = ConbaModel.load(tmp)
        model.backbone.config.name_or_path = EMBEDDED_NAME if is_embedded(base) else str(folder)
        model.info = {**model.info, "gpu_checkpoint": manifest["name"]}
        model.save(out, dtype="float16")
        vectors = _probe_vectors(model, manifest["probes"])
        diff = float(np.abs(np.asarray(vectors) - np.asarray(manifest["vectors"])).max())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"out": str(out), "fingerprint": model.fingerprint(), "probe_max_difference": round(diff, 6)}
