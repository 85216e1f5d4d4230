"""ConbaModel: backbone + head, with ``encode`` / ``similarity`` and a folder format.

A saved model is a folder::

    conba_config.json        backbone config, head kind, thresholds, fingerprint, input view, training info
    head/                    head_config.json + head.safetensors
    backbone/                full Hugging Face folder (safetensors + tokenizer), or
    backbone_delta.safetensors   only the tensors that differ from an always-available base model

``load_model("default")`` loads the model shipped inside the package (a delta over the embedded
all-MiniLM-L6-v2), so it needs no network.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from conba.encoder.backbone import Backbone, BackboneConfig, BackboneError, is_embedded, load_hf
from conba.errors import ConbaError, ConfigError
from conba.heads import Head, HeadConfig, build_head, load_head, save_head
from conba.syntax.view import VIEWS, check_view
from conba.utils.io import read_json, write_json_atomic

CONFIG_NAME = "conba_config.json"
DEFAULT_MODEL_DIR = Path(__file__).parent / "default_model"
DEFAULT_SDTP_DIR = Path(__file__).parent / "prune" / "default"  # SDTP scorers trained for the default model
DEFAULT_BATCH_TOKENS = 4096  # padded tokens per encode batch (measured on 2 CPU cores; docs/BENCHMARKS.md)
FORMAT_VERSION = 1


class ModelError(ConbaError, RuntimeError):
    """A model folder is missing, corrupt, or inconsistent."""


def _state_hash(h: Any, state: dict[str, torch.Tensor]) -> None:
    for key in sorted(state):
        t = state[key].detach().contiguous().cpu()
        h.update(key.encode())
        h.update(str(t.dtype).encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")


class ConbaModel(nn.Module):
    """A code encoder: backbone token states -> head -> one (normalised) vector per snippet."""

    def __init__(self, backbone: Backbone, head: Head, threshold: float | None = None,
                 info: dict | None = None, view: str = "raw"):
        super().__init__()
        self.backbone = backbone
        self.head = head
        self.threshold = threshold  # best F1 on balanced dev pairs (training)
        self.clone_threshold: dict | None = None  # {"value", "precision", "recall", ...}: `conba calibrate`
        self.info: dict = dict(info or {})
        self.view = check_view(view)  # input view encode() applies (conba.syntax.view); saved with the model
        self.pruner: nn.Module | None = None  # SDTP token scorers (conba.prune), saved in prune/
        self.use_pruning = True  # encode() prunes when a pruner is attached; load_model(prune=False) turns it off
        self._engines: dict = {}  # ONNX Runtime encoders built on first use (conba.engine.onnx_runtime)
        self.max_chunks: int | None = 1  # windows per long snippet (conba.engine.chunks); 1 = truncate

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, backbone: str | BackboneConfig = "default", head: HeadConfig | None = None,
               view: str = "raw", **backbone_kwargs: Any) -> ConbaModel:
        cfg = backbone if isinstance(backbone, BackboneConfig) else BackboneConfig(
            name_or_path=_canonical_backbone(backbone), **backbone_kwargs)
        bb = Backbone(cfg)
        head = head or HeadConfig(kind="none")
        head.dim = bb.hidden_size
        return cls(bb, build_head(head), view=view)

    @property
    def dim(self) -> int:
        return int(self.head.config.out_dim or self.head.config.dim)

    def get_sentence_embedding_dimension(self) -> int:
        """The embedding width (sentence-transformers' name for :attr:`dim`)."""
        return self.dim

    get_embedding_dimension = get_sentence_embedding_dimension  # its name since sentence-transformers 6

    @property
    def device(self) -> torch.device:
        """Where the weights live; ``encode`` moves each batch there (``model.to("cuda")``)."""
        return next(self.backbone.model.parameters()).device

    # ------------------------------------------------------------------ encoding
    def embed_tokens(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                     lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Args: input_ids, attention_mask: shape (b, l). Returns (b, out_dim), not normalised."""
        if self.head.prefix is not None:  # language code inserted after CLS (conba.heads.prefix)
            from conba.heads.prefix import prefixed_states

            tokens = prefixed_states(self.backbone, self.head.prefix, input_ids, attention_mask, lang_ids)
        else:
            tokens = self.backbone(input_ids, attention_mask)
        return self.head(tokens, attention_mask.bool(), lang_ids)

    @torch.inference_mode()
    def encode(self, codes: str | Sequence[str], languages: str | Sequence[str] | None = None,
               batch_size: int = 32, show_progress_bar: bool | None = None, normalize: bool = True,
               convert_to_numpy: bool = True, convert_to_tensor: bool = False,
               engine: str = "torch",
               max_batch_tokens: int | None = DEFAULT_BATCH_TOKENS,
               max_chunks: int | None = None,
               view: str | None = None, *,
               normalize_embeddings: bool | None = None, precision: str = "float32") -> np.ndarray | torch.Tensor:
        """Embed code snippets. Returns float32 (n, d) (numpy by default), in input order.

        Snippets are tokenized once and sorted by token length so each batch pads little; the order
        is restored. A batch holds at most ``batch_size`` snippets and at most ``max_batch_tokens``
        padded tokens (None: no budget), so long snippets run in smaller batches, which is faster on
        CPUs; embeddings do not depend on the batching beyond float rounding.
        ``languages`` (one name, or one per snippet) selects the language control codes.
        ``engine``: "torch" (default), "onnx" (ONNX Runtime, dynamic int8) or "onnx-fp32"; both
        ONNX engines need ``pip install 'conba[onnx]'``. An attached SDTP pruner (``conba prune
        train``) prunes tokens in every engine unless ``use_pruning`` is False.
        ``max_chunks``: a snippet longer than the backbone's window is cut into up to this many
        windows whose vectors are averaged (:mod:`conba.engine.chunks`); 1 truncates to the first
        window. None: the model's setting (``self.max_chunks``).
        ``view`` (default: the model's ``view``) is the input view each snippet goes through first
        (:func:`conba.syntax.view.apply_views`; snippets without a language stay raw).
        sentence-transformers' names work too: ``normalize_embeddings`` and ``precision`` (float32,
        int8, uint8, binary, ubinary: :mod:`conba.engine.precision`).
        """
        if normalize_embeddings is not None:  # sentence-transformers' name for ``normalize``
            normalize = normalize_embeddings
        if precision != "float32":
            from conba.engine.precision import quantize

            full = self.encode(codes, languages, batch_size, show_progress_bar, normalize, engine=engine,
                               max_batch_tokens=max_batch_tokens, max_chunks=max_chunks, view=view)
            return quantize(full, precision)
        single = isinstance(codes, str)
        codes = [codes] if single else list(codes)
        if isinstance(languages, str) or languages is None:
            languages = [languages or ""] * len(codes)
        languages = list(languages)
        if len(languages) != len(codes):
            raise ConfigError(f"got {len(codes)} codes but {len(languages)} languages")
        if any(not isinstance(c, str) for c in codes):
            raise TypeError("encode() takes strings of code")
        if batch_size < 1:
            raise ConfigError("batch_size must be >= 1")
        view = check_view(view or self.view)
        if view != "raw":
            from conba.syntax.view import apply_views

            codes, _ = apply_views(codes, languages, view)
        from conba.engine import ENGINES, apply_threads, length_sorted_batches, pad_token_id
        from conba.engine.chunks import check_max_chunks, chunk_ids, pool_chunks

        if engine not in ENGINES:
            raise ConfigError(f"unknown engine {engine!r} ({', '.join(ENGINES)})")
        self.eval()
        apply_threads()
        out = torch.zeros(len(codes), self.dim)
        if codes:
            chunks = chunk_ids(self.backbone, codes, check_max_chunks(
                self.max_chunks if max_chunks is None else max_chunks))  # one tokenizer pass
            owner = chunks.owner
            if show_progress_bar is None:
                show_progress_bar = len(chunks.ids) > 4 * batch_size and sys.stderr.isatty()
            from tqdm.auto import tqdm

            bar = tqdm(total=len(chunks.ids), desc="encode", unit="window", disable=not show_progress_bar)
            device = self.device
            windows = torch.zeros(len(chunks.ids), self.dim)
            for batch in length_sorted_batches(chunks.ids, batch_size, pad_token_id(self.backbone.tokenizer),
                                               max_batch_tokens):
                lang_ids = self.head.language_ids([languages[owner[i]] for i in batch.index]).to(device)
                emb = self._embed_batch(batch.input_ids.to(device), batch.attention_mask.to(device), lang_ids,
                                        engine).float()
                windows[batch.index] = emb.cpu()
                bar.update(len(batch.index))
            bar.close()
            out = windows if len(chunks.ids) == len(codes) else pool_chunks(windows, chunks, len(codes))
        if normalize:
            out = torch.nn.functional.normalize(out, dim=-1)
        if single:
            out = out[0]
        if convert_to_tensor:
            return out
        return out.numpy() if convert_to_numpy else out

    def _embed_batch(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, lang_ids: torch.Tensor,
                     engine: str) -> torch.Tensor:
        """One padded batch through the chosen engine (with SDTP pruning when attached and on)."""
        prune = self.pruner is not None and self.use_pruning
        if self.head.prefix is not None:  # prefix control codes: conba runs the layers (torch only)
            if engine != "torch" or prune:
                from conba.heads.prefix import require_no_prefix

                require_no_prefix(self.head, "SDTP pruning" if prune else f"engine {engine!r}")
            return self.embed_tokens(input_ids, attention_mask, lang_ids)
        if engine != "torch":
            from conba.engine.onnx_runtime import onnx_encoder
            from conba.prune.forward import embed_states

            out = onnx_encoder(self, engine, prune).token_states(input_ids, attention_mask,
                                                                 self.pruner.config if prune else None)
            return embed_states(self, out.to(attention_mask.device), lang_ids)
        if prune:
            from conba.prune.forward import embed_pruned

            return embed_pruned(self, input_ids, attention_mask, lang_ids)
        if self._own_loop():  # same results as embed_tokens, a little faster (no 4-D mask, no pooler)
            from conba.prune.forward import dense_states

            return self.head(dense_states(self.backbone, input_ids, attention_mask), attention_mask.bool(), lang_ids)
        return self.embed_tokens(input_ids, attention_mask, lang_ids)

    def _own_loop(self) -> bool:
        """Whether the backbone is a BERT-family encoder whose layers conba can run itself."""
        from conba.prune.forward import supports_own_loop

        return supports_own_loop(self.backbone)

    def similarity(self, a: Any, b: Any, languages_a: Any = None, languages_b: Any = None) -> np.ndarray:
        """Cosine similarity between two sets of snippets (strings) or embeddings (arrays)."""
        ea = self._as_embeddings(a, languages_a)
        eb = self._as_embeddings(b, languages_b)
        ea = ea / np.maximum(np.linalg.norm(ea, axis=-1, keepdims=True), 1e-12)
        eb = eb / np.maximum(np.linalg.norm(eb, axis=-1, keepdims=True), 1e-12)
        sim = np.atleast_2d(ea) @ np.atleast_2d(eb).T
        return sim if (np.ndim(ea) == 2 or np.ndim(eb) == 2) else sim[0, 0]

    def _as_embeddings(self, x: Any, languages: Any) -> np.ndarray:
        if isinstance(x, str) or (isinstance(x, (list, tuple)) and x and isinstance(x[0], str)):
            return self.encode(x, languages=languages)
        if isinstance(x, torch.Tensor):
            return x.detach().float().cpu().numpy()
        return np.asarray(x, dtype=np.float32)

    # ------------------------------------------------------------------ persistence
    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(json.dumps(self.backbone.config.to_dict(), sort_keys=True).encode())
        h.update(json.dumps(self.head.config.fingerprint_dict(), sort_keys=True).encode())
        _state_hash(h, self.head.state_dict())
        _state_hash(h, self.backbone.model.state_dict())
        return h.hexdigest()[:16]

    def embedding_fingerprint(self) -> str:
        """Identity of the vectors ``encode()`` gives: :meth:`fingerprint` (the weights), combined with
        the SDTP pruner's settings and weights while pruning is on (pruned vectors differ slightly),
        with ``max_chunks`` unless it is 1 (long inputs pooled over windows) and with the input view
        unless it is ``raw`` (vectors of two views never mix in an index)."""
        key = self.fingerprint()
        if self.max_chunks != 1:
            key = hashlib.sha256(f"{key}|chunks={self.max_chunks}".encode()).hexdigest()[:16]
        if self.pruner is not None and self.use_pruning:
            from conba.prune.scorer import pruner_key

            key = hashlib.sha256(f"{key}|{pruner_key(self.pruner)}".encode()).hexdigest()[:16]
        if self.view != "raw":
            key = hashlib.sha256(f"{key}|view={self.view}".encode()).hexdigest()[:16]
        return key

    def save(self, directory: str | Path, storage: str = "auto", dtype: str = "float32",
             sentence_transformers: bool = False) -> Path:
        """Save as a folder. storage: 'full', 'delta' (only tensors differing from the embedded
        base; requires the embedded backbone) or 'auto' (delta when possible). ``sentence_transformers``:
        also let ``SentenceTransformer(folder)`` load it (full backbone; :mod:`conba.st_export`)."""
        from safetensors.torch import save_file

        from conba import st_export

        directory = Path(directory)
        base = self.backbone.config.name_or_path
        if storage == "auto":
            storage = "delta" if is_embedded(base) and not sentence_transformers else "full"
        if sentence_transformers:
            st_export.check(self, directory, storage)
        directory.mkdir(parents=True, exist_ok=True)
        if dtype not in ("float32", "float16"):
            raise ConfigError("dtype must be float32 or float16")
        if storage == "delta":
            if not is_embedded(base):
                raise ModelError("delta storage needs the embedded backbone as base; use storage='full'")
            _, base_model = load_hf(base)
            base_state = base_model.state_dict()
            state = self.backbone.model.state_dict()
            changed = [k for k, v in state.items() if k not in base_state or not torch.equal(v, base_state[k])]
            if dtype == "float16":
                self._round_to(torch.float16, [state[k] for k in changed])
            delta = {k: state[k].detach().to(getattr(torch, dtype)).contiguous() for k in changed}
            tmp = directory / ".backbone_delta.safetensors.tmp"
            save_file(delta, str(tmp))
            tmp.replace(directory / "backbone_delta.safetensors")
            shutil.rmtree(directory / "backbone", ignore_errors=True)
        elif storage == "full":
            if dtype == "float16":
                self._round_to(torch.float16, list(self.backbone.model.parameters()))
            tmpdir = directory / ".backbone.tmp"
            shutil.rmtree(tmpdir, ignore_errors=True)
            self.backbone.model.save_pretrained(tmpdir, safe_serialization=True)
            self.backbone.tokenizer.save_pretrained(tmpdir)
            shutil.rmtree(directory / "backbone", ignore_errors=True)
            tmpdir.replace(directory / "backbone")
            (directory / "backbone_delta.safetensors").unlink(missing_ok=True)
        else:
            raise ConfigError(f"unknown storage '{storage}' (auto, full, delta)")
        if dtype == "float16":
            self._round_to(torch.float16, list(self.head.parameters()))
        save_head(self.head, directory / "head")
        if self.pruner is not None:
            from conba.prune.scorer import save_pruner

            save_pruner(self.pruner, directory / "prune")
        else:
            shutil.rmtree(directory / "prune", ignore_errors=True)
        config = {
            "format": "conba-model",
            "format_version": FORMAT_VERSION,
            "backbone": self.backbone.config.to_dict(),
            "backbone_storage": storage,
            "dtype": dtype,
            "threshold": self.threshold,
            "max_chunks": self.max_chunks,
            **({"clone_threshold": self.clone_threshold} if self.clone_threshold else {}),
            "fingerprint": self.fingerprint(),
            "view": self.view,
            "info": self.info,
        }
        write_json_atomic(directory / CONFIG_NAME, config)
        if sentence_transformers:
            st_export.write_files(self, directory)
        else:
            st_export.remove_files(directory)
        return directory

    @staticmethod
    def _round_to(dtype: torch.dtype, tensors: list[torch.Tensor]) -> None:
        """Round tensors in place to ``dtype`` precision (kept float32), so what is saved loads back exact."""
        with torch.no_grad():
            for t in tensors:
                t.copy_(t.to(dtype).to(t.dtype))

    @classmethod
    def load(cls, directory: str | Path) -> ConbaModel:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        directory = Path(directory)
        cfg_path = directory / CONFIG_NAME
        if not cfg_path.exists():
            raise ModelError(f"{directory}: not a conba model folder (no {CONFIG_NAME})")
        try:
            config = read_json(cfg_path)
        except ValueError as exc:
            raise ModelError(f"{exc}; the model folder is corrupt, re-save or re-train it") from None
        if config.get("format") != "conba-model":
            raise ModelError(f"{cfg_path}: not a conba model config")
        view = config.get("view", "raw")  # folders saved before views existed: raw, as they behaved
        if view not in VIEWS:
            raise ModelError(f"{cfg_path}: unknown input view {view!r} (valid: {', '.join(VIEWS)})")
        bcfg = BackboneConfig.from_dict(config["backbone"])
        storage = config.get("backbone_storage", "full")
        try:
            if storage == "full":
                tokenizer, hf = load_hf(str(directory / "backbone"))
            else:
                tokenizer, hf = load_hf(bcfg.name_or_path)
                delta = load_file(str(directory / "backbone_delta.safetensors"))
                state = hf.state_dict()
                for k, v in delta.items():
                    if k not in state:
                        raise ModelError(f"{directory}: delta tensor '{k}' not in base model {bcfg.name_or_path}")
                    state[k] = v.to(state[k].dtype)
                hf.load_state_dict(state)
        except (SafetensorError, FileNotFoundError, OSError) as exc:
            raise ModelError(f"{directory}: backbone weights missing or corrupt ({exc})") from None
        except BackboneError as exc:
            raise ModelError(f"{directory}: {exc}") from None
        backbone = Backbone(bcfg, tokenizer=tokenizer, model=hf)
        head = load_head(directory / "head")
        model = cls(backbone, head, threshold=config.get("threshold"), info=config.get("info"), view=view)
        try:
            from conba.engine.chunks import check_max_chunks

            model.max_chunks = check_max_chunks(config.get("max_chunks", 1))  # old folders: truncation
        except ValueError as exc:
            raise ModelError(f"{cfg_path}: {exc}") from None
        calibrated = model.clone_threshold = config.get("clone_threshold")
        if calibrated is not None and not (isinstance(calibrated, dict)
                                           and isinstance(calibrated.get("value"), (int, float))):
            raise ModelError(f"{cfg_path}: 'clone_threshold' must be an object with a numeric 'value'; "
                             "re-run `conba calibrate --write`")
        if (directory / "prune").is_dir():
            from conba.prune.scorer import load_pruner

            try:
                model.pruner = load_pruner(directory / "prune")
            except (FileNotFoundError, ValueError) as exc:
                raise ModelError(f"{directory}: SDTP pruning module unusable ({exc})") from None
        model.eval()
        return model


def _canonical_backbone(name: str) -> str:
    from conba.encoder.backbone import EMBEDDED_NAME

    return EMBEDDED_NAME if is_embedded(name) else str(name)


def load_model(name_or_path: str | Path = "default", prune: bool = True) -> ConbaModel:
    """Load a conba model folder, the shipped ``default``, or a bare HF encoder (``zero-shot``:
    backbone + mean pooling, no trained head). ``prune=False`` turns off an attached SDTP pruner
    (``encode`` then gives the exact embeddings of the model without it)."""
    model = _load_model(name_or_path)
    model.use_pruning = bool(prune)
    return model


def _load_model(name_or_path: str | Path) -> ConbaModel:
    name = str(name_or_path)
    if name == "default":
        if not (DEFAULT_MODEL_DIR / CONFIG_NAME).exists():
            raise ModelError(f"the shipped default model is missing from {DEFAULT_MODEL_DIR}; reinstall conba")
        return ConbaModel.load(DEFAULT_MODEL_DIR)
    if name == "default-sdtp":  # the default model with its shipped SDTP token pruner
        model = _load_model("default")
        from conba.prune.scorer import load_pruner

        try:
            model.pruner = load_pruner(DEFAULT_SDTP_DIR)
        except (FileNotFoundError, ValueError) as exc:
            raise ModelError(f"the shipped SDTP pruner is missing or corrupt ({exc}); reinstall conba") from None
        return model
    if name == "zero-shot":
        return ConbaModel.create("default")
    path = Path(name)
    if (path / CONFIG_NAME).exists():
        return ConbaModel.load(path)
    if path.exists() and not (path / "config.json").exists():
        raise ModelError(f"{path}: neither a conba model folder nor a Hugging Face model folder")
    try:
        return ConbaModel.create(name)
    except BackboneError as exc:
        raise ModelError(str(exc)) from None
