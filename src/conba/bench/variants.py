"""The encoders compared by ``conba bench speed``, all on the same backbone weights.

* ``st``    sentence-transformers ``encode`` (the peer): Transformer(backbone) + mean pooling +
            Normalize, the backbone loaded by sentence-transformers itself (no conba head);
* ``exact`` conba, torch engine, no pruning (the model's own head);
* ``raw``   conba exact on the raw text (no input view): what the view's shorter inputs buy;
* ``sdtp``  conba + SDTP token pruning, torch engine;
* ``onnx``  conba, ONNX Runtime with dynamic int8 quantisation, no pruning;
* ``both``  conba + SDTP, ONNX Runtime int8;
* ``fast``  the distilled student (fewer layers, ``conba distill``), torch engine;
* ``fast-onnx`` the student, ONNX Runtime int8.

The student variants run other weights than the peer (a shallower copy of the model): their speed
ratio is what a user gains by switching to the student, their MAP@R what it costs.

Every variant runs on the same device in the same precision (``--device``, ``--dtype``:
sentence-transformers' model is moved and cast as conba's is) and with the same batch size (the
device's plan: :func:`conba.engine.batching.plan_batches`); the ONNX variants run on the CPU in
float32 only, so on a GPU or in half precision they are skipped.

Each variant is a function ``(codes, languages) -> float32 (n, d)`` with L2-normalised rows.
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from conba.errors import ConfigError

VARIANTS = ("st", "exact", "raw", "sdtp", "onnx", "both", "fast", "fast-onnx")
STUDENT_VARIANTS = ("fast", "fast-onnx")
Encoder = Callable[[list[str], list[str]], np.ndarray]


@dataclass
class VariantSet:
    encoders: dict[str, Encoder]
    skipped: dict[str, str] = field(default_factory=dict)  # variant -> why
    model: Any = None  # the ConbaModel (pruner attached when available)
    student: Any = None  # the distilled student ConbaModel of the fast variants
    student_source: str = ""
    st_model: object = None
    pruner_source: str = ""
    placement: object = None  # conba.engine.device.Placement every variant runs on
    cleanup: list = field(default_factory=list)


def resolve_pruner(model, model_name: str, sdtp: str | None):
    """The pruner to benchmark: the model's own, the one in ``sdtp`` (a pruned model folder of the
    same base model), or for the shipped default model the shipped ``default-sdtp`` one.
    Returns (pruner or None, source text)."""
    from conba.model import load_model

    if model.pruner is not None:
        return model.pruner, f"{model_name} (its own prune/)"
    candidates = [sdtp] if sdtp else (["default-sdtp"] if model_name == "default" else [])
    for cand in candidates:
        try:
            other = load_model(cand)
        except Exception as exc:  # noqa: BLE001 - reported as a skip reason
            return None, f"could not load SDTP model {cand!r}: {exc}"
        if other.pruner is None:
            return None, f"{cand!r} has no pruning module (train one with `conba prune train`)"
        base = other.pruner.config.base_fingerprint
        if base and base != model.fingerprint():
            return None, (f"the pruner in {cand!r} was trained for model {base}, not {model.fingerprint()}; "
                          f"retrain: conba prune train --model {model_name} --out DIR")
        return other.pruner, str(cand)
    return None, "no pruning module: pass --sdtp DIR (made by `conba prune train`)"


def resolve_student(model_name: str, student: str | None):
    """The student of the fast variants: ``student`` (a folder made by ``conba distill``), or for the
    shipped default model the shipped ``default-fast``. Returns (model or None, source or why not)."""
    from conba.model import load_model

    cand = student or ("default-fast" if model_name == "default" else "")
    if not cand:
        return None, "no student: pass --student DIR (made by `conba distill`)"
    try:
        m = load_model(cand, prune=False)
    except Exception as exc:  # noqa: BLE001 - reported as a skip reason
        return None, f"could not load student {cand!r}: {exc}"
    m.eval()
    return m, str(cand)


def sentence_transformer(model, workdir: Path, placement=None):
    """A SentenceTransformer over the same backbone weights (mean pooling + Normalize), max length as conba,
    on ``placement``'s device in its dtype (None: the CPU, float32). Build it before conba's model is moved."""
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6 moved the modules (the old path warns, and will go)
        models = importlib.import_module("sentence_transformers.sentence_transformer.modules")
    except ImportError:
        models = importlib.import_module("sentence_transformers.models")

    from conba.encoder.backbone import embedded_model_path, is_embedded, load_hf

    backbone = model.backbone
    path = None
    if is_embedded(backbone.config.name_or_path):
        _, base = load_hf(backbone.config.name_or_path)
        ref = base.state_dict()
        if all(torch.equal(v, ref[k]) for k, v in backbone.model.state_dict().items() if k in ref):
            path = str(embedded_model_path())  # unchanged weights: the packaged folder, as users load it
    if path is None:
        path = str(workdir / "st-backbone")
        backbone.model.save_pretrained(path, safe_serialization=True)
        backbone.tokenizer.save_pretrained(path)
    no_code = {"trust_remote_code": False}  # never asked on stdin (conba.encoder.hf_load)
    try:
        word = models.Transformer(path, max_seq_length=backbone.max_length, model_kwargs=no_code,
                                  processor_kwargs=no_code, config_kwargs=no_code)
    except TypeError:  # sentence-transformers < 6 names them model_args / tokenizer_args / config_args
        word = models.Transformer(path, max_seq_length=backbone.max_length, model_args=no_code,
                                  tokenizer_args=no_code, config_args=no_code)
    dim_of = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pool = models.Pooling(dim_of(), pooling_mode="mean")
    st = SentenceTransformer(modules=[word, pool, models.Normalize()], device=str(placement.device) if placement
                             else "cpu")
    if placement is not None and placement.dtype != torch.float32:
        st.to(placement.dtype)  # as sentence-transformers users run half precision: model.half()
    return st


def build_variants(model_name: str, sdtp: str | None, batch_size: int | None, wanted: list[str],
                   max_batch_tokens: int = -1, student: str | None = None, placement=None) -> VariantSet:
    """The encoders of ``wanted`` on ``placement`` (a :class:`conba.engine.device.Placement`; None: the
    CPU in float32). ``batch_size`` None: the device's plan. ``max_batch_tokens``: -1 = the device's
    plan, 0 = none."""
    from conba.engine.batching import plan_batches
    from conba.engine.device import place_model, resolve_placement
    from conba.model import load_model

    placement = placement or resolve_placement("cpu", "float32")
    plan = plan_batches(placement.device, batch_size, "auto" if max_batch_tokens < 0 else (max_batch_tokens or None))
    batch_size, budget = plan.batch_size, plan.max_tokens
    on_cpu32 = placement.device.type == "cpu" and placement.dtype == torch.float32

    model = load_model(model_name)
    model.eval()
    out = VariantSet({}, model=model, placement=placement)
    pruner, source = resolve_pruner(model, model_name, sdtp)
    out.pruner_source = source
    if pruner is not None:
        model.pruner = pruner
    st_made = None
    if "st" in wanted:  # from the float32 CPU weights, before conba's model is moved
        try:
            tmp = tempfile.TemporaryDirectory(prefix="conba-bench-")
            out.cleanup.append(tmp)
            st_made = sentence_transformer(model, Path(tmp.name), placement)
        except ImportError:
            st_made = None
    place_model(model, placement.device, placement.dtype)
    try:
        from conba.engine.onnx_export import require_onnx

        require_onnx()
        onnx_missing = ""
    except RuntimeError as exc:
        onnx_missing = str(exc)
    if not on_cpu32:
        onnx_missing = (f"ONNX Runtime variants run on the CPU in float32 (this run: {placement.device}, "
                        f"{placement.dtype_name})")

    def conba(prune: bool, engine: str, which=model, view: str | None = None) -> Encoder:
        def encode(codes: list[str], languages: list[str]) -> np.ndarray:
            which.use_pruning = prune
            return which.encode(codes, languages=languages, batch_size=batch_size, engine=engine,
                                show_progress_bar=False, max_batch_tokens=budget, view=view)
        return encode

    if any(v in STUDENT_VARIANTS for v in wanted):
        out.student, out.student_source = resolve_student(model_name, student)
        if out.student is not None:
            place_model(out.student, placement.device, placement.dtype)

    for name in wanted:
        if name == "st":
            if st_made is None:
                out.skipped[name] = "sentence-transformers is not installed: pip install 'conba[bench]'"
                continue
            st = out.st_model = st_made

            def st_encode(codes: list[str], languages: list[str], st=st) -> np.ndarray:
                return st.encode(codes, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
            out.encoders[name] = st_encode
        elif name == "exact":
            out.encoders[name] = conba(False, "torch")
        elif name == "raw":
            out.encoders[name] = conba(False, "torch", view="raw")
        elif name in STUDENT_VARIANTS and out.student is None:
            out.skipped[name] = out.student_source
        elif name == "fast":
            out.encoders[name] = conba(False, "torch", out.student)
        elif name == "fast-onnx" and onnx_missing:
            out.skipped[name] = onnx_missing
        elif name == "fast-onnx":
            out.encoders[name] = conba(False, "onnx", out.student)
        elif name in ("sdtp", "both") and pruner is None:
            out.skipped[name] = source
        elif name in ("onnx", "both") and onnx_missing:
            out.skipped[name] = onnx_missing
        elif name == "sdtp":
            out.encoders[name] = conba(True, "torch")
        elif name == "onnx":
            out.encoders[name] = conba(False, "onnx")
        elif name == "both":
            out.encoders[name] = conba(True, "onnx")
        else:
            raise ConfigError(f"unknown variant {name!r} ({', '.join(VARIANTS)})")
    return out


def headless_exact(model) -> Encoder:
    """conba's torch path with mean pooling and no head, on the model's backbone (for the cosine check
    against sentence-transformers, which has no head)."""
    from conba.heads import HeadConfig, build_head
    from conba.model import ConbaModel

    bare = ConbaModel(model.backbone, build_head(HeadConfig(kind="none", dim=model.backbone.hidden_size)))
    bare.eval()

    def encode(codes: list[str], languages: list[str]) -> np.ndarray:
        return np.asarray(bare.encode(codes, show_progress_bar=False))
    return encode
