"""ConbaModel: backbone + head, with ``encode`` / ``similarity``; saved as a folder (:mod:`conba.model.persist`).

``load_model("default")`` (:mod:`conba.model.loading`) loads the model shipped inside the package (a
delta over the embedded all-MiniLM-L6-v2), so it needs no network.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from conba.constants import MODEL_CONFIG_NAME, SHIPPED_MODEL_DIRS
from conba.encoder.backbone import Backbone, BackboneConfig, is_embedded
from conba.encoder.layers import dense_states, supports_own_loop
from conba.encoder.sdtp.pruned import embed_pruned, embed_states
from conba.encoder.sdtp.scorer import pruner_key
from conba.engine.batching import CPU_BATCH_TOKENS
from conba.errors import ConbaError, ConfigError
from conba.heads import Head, HeadConfig, build_head
from conba.model.old_names import OldNames, renamed
from conba.syntax.view import check_view

if TYPE_CHECKING:
    from conba.encoder.sdtp import PruneModule
    from conba.heads.window_head import WindowHead

CONFIG_NAME = MODEL_CONFIG_NAME
DEFAULT_MODEL_DIR = Path(__file__).parent.parent / SHIPPED_MODEL_DIRS["default"]
DEFAULT_SDTP_DIR = Path(__file__).parent.parent / "prune" / "default"  # SDTP scorers trained for the default model
DEFAULT_FAST_DIR = Path(__file__).parent.parent / SHIPPED_MODEL_DIRS["default-fast"]  # the student (conba distill)
DEFAULT_BATCH_TOKENS = CPU_BATCH_TOKENS  # padded tokens per encode batch on a CPU (conba.engine.batching)
FORMAT_VERSION = 1


class ModelError(ConbaError, RuntimeError):
    """A model folder is missing, corrupt, or inconsistent."""


def _state_hash(h: Any, state: dict[str, torch.Tensor]) -> None:
    for key in sorted(state):
        t = state[key].detach().contiguous().cpu()
        h.update(key.encode())
        h.update(str(t.dtype).encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")


class ConbaModel(OldNames, nn.Module):
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
        # The lexical share of the fused score that indexes built with this model use (conba.lexical);
        # 0: dense only. Not part of the fingerprint: it changes scores, not vectors.
        self.lexical_weight: float = 0.0
        self.pruner: PruneModule | None = None  # SDTP token scorers (conba.prune), saved in prune/
        self.use_pruning = True  # encode() prunes when a pruner is attached; load_model(prune=False) turns it off
        self._engines: dict = {}  # ONNX Runtime encoders built on first use (conba.engine.onnx_runtime)
        self.max_windows: int | None = 1  # windows per long snippet (conba.engine.windows); 1 = truncate
        # The window head: the read-out of a long snippet's windows (conba.heads.window_head.WindowHead, saved in
        # fragment_head/); None: their token-weighted mean. Used only when max_windows != 1; one-window snippets
        # never see it.
        self.window_head: WindowHead | None = None
        if backbone.readout is not None and head.needs_tokens:
            raise ConfigError(f"head {head.config.kind}/{head.config.mode} reads every token state, but the backbone "
                              f"has its own read-out ({backbone.readout.config.describe()}); use a pooled head "
                              "(none, linear, or conba with head_mode pooled)")
        self._source_fingerprint: tuple[torch.dtype, str] | None = None  # kept across casts (_apply)

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, backbone: str | BackboneConfig = "default", head: HeadConfig | None = None,
               view: str = "raw", **backbone_kwargs: Any) -> ConbaModel:
        cfg = backbone if isinstance(backbone, BackboneConfig) else BackboneConfig(
            name_or_path=_canonical_backbone(backbone), **backbone_kwargs)
        bb = Backbone(cfg)
        head = head or HeadConfig(kind="none")
        head.dim = bb.output_dim  # the read-out's width when the backbone has its own (conba.encoder.readout)
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

    @property
    def dtype(self) -> torch.dtype:
        """The weights' precision (``model.to(torch.float16)`` / ``model.half()`` for half precision)."""
        from conba.engine.device import weights_dtype

        return weights_dtype(self)

    def _apply(self, fn: Any, recurse: bool = True) -> Any:
        """``nn.Module.to`` / ``half`` / ``cuda`` go through here: the first cast to another precision
        records the fingerprint of the weights as loaded (their dtype and hash), so :meth:`fingerprint`
        (and an index's check of it) does not depend on the precision the model runs in."""
        current = self.dtype
        if fn(torch.zeros(1, dtype=current)).dtype != current:
            source = self.cast_from
            if source is None or source == current:  # first cast, or back at the source dtype (maybe trained)
                self._source_fingerprint = (current, self.fingerprint())
        return super()._apply(fn, recurse)

    @property
    def cast_from(self) -> torch.dtype | None:
        """The dtype the weights had before the model was first cast (None: never cast)."""
        source = getattr(self, "_source_fingerprint", None)
        return None if source is None else source[0]

    # ------------------------------------------------------------------ encoding
    def embed_tokens(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                     lang_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Args: input_ids, attention_mask: shape (b, l). Returns (b, out_dim), not normalised."""
        if self.head.prefix is not None:  # language code inserted after CLS (conba.heads.prefix)
            from conba.heads.prefix import prefixed_states

            tokens = prefixed_states(self.backbone, self.head.prefix, input_ids, attention_mask, lang_ids)
        else:
            tokens = self.backbone(input_ids, attention_mask)
        return self.head(*self.backbone.read_out(tokens, attention_mask.bool()), lang_ids)

    @torch.inference_mode()
    def encode(self, codes: str | Sequence[str], languages: str | Sequence[str] | None = None,
               batch_size: int | None = None, show_progress_bar: bool | None = None, normalize: bool = True,
               convert_to_numpy: bool = True, convert_to_tensor: bool = False,
               engine: str = "torch",
               max_batch_tokens: int | None | str = "auto",
               max_windows: int | None = None,
               view: str | None = None, *,
               normalize_embeddings: bool | None = None, precision: str = "float32",
               device: str | torch.device | None = None,
               dtype: str | torch.dtype | None = None, prompt_name: str | None = None,
               prompt: str | None = None, max_chunks: int | None = None) -> np.ndarray | torch.Tensor:
        """Embed code snippets. Returns float32 (n, d) (numpy by default), in input order.

        Snippets are tokenized once and sorted by token length so each batch pads little; the order
        is restored. A batch holds at most ``batch_size`` snippets and at most ``max_batch_tokens``
        padded tokens (None: no budget), so long snippets run in smaller batches, which is faster on
        CPUs; embeddings do not depend on the batching beyond float rounding. Both default to the
        plan for the model's device (:func:`conba.engine.batching.plan_batches`: 32 snippets and 4,096
        tokens on a CPU, 256 snippets on a GPU).
        ``device`` / ``dtype`` (as in sentence-transformers, they move the model, in place: ``auto``,
        ``cpu``, ``cuda[:N]``, ``mps``; ``float32``, ``float16``, ``bfloat16``, ``auto`` = float16 on
        CUDA; :mod:`conba.engine.device`); None keeps the model where and as it is.
        ``languages`` (one name, or one per snippet) selects the language control codes.
        ``prompt_name`` / ``prompt`` (as in sentence-transformers): text put before every snippet, one of
        the backbone's own prompts by name or any text; None: the model's default prompt, else its
        document prompt (conba's snippets are documents; :meth:`encode_query` uses the query prompt).
        ``engine``: "torch" (default), "onnx" (ONNX Runtime, dynamic int8) or "onnx-fp32"; both
        ONNX engines need ``pip install 'conba[onnx]'``. An attached SDTP pruner (``conba prune
        train``) prunes tokens in every engine unless ``use_pruning`` is False.
        ``max_windows``: a snippet longer than the backbone's window is cut into up to this many
        windows whose vectors are averaged (:mod:`conba.engine.windows`), or read by the model's
        ``window_head`` when it has one; 1 truncates to the first window. None: the model's setting
        (``self.max_windows``; ``max_chunks``: its old name). A snippet of one window gets the same vector whatever
        the setting.
        ``view`` (default: the model's ``view``) is the input view each snippet goes through first
        (:func:`conba.syntax.view.apply_views`; snippets without a language stay raw).
        sentence-transformers' names work too: ``normalize_embeddings`` and ``precision`` (float32,
        int8, uint8, binary, ubinary: :mod:`conba.engine.precision`).
        """
        if max_chunks is not None:
            max_windows = renamed("max_chunks", max_chunks, max_windows)
        if normalize_embeddings is not None:  # sentence-transformers' name for ``normalize``
            normalize = normalize_embeddings
        if device is not None or dtype is not None:
            from conba.engine.device import place_model

            place_model(self, self.device if device is None else device,
                        self.dtype if dtype is None else dtype, engine)
        if precision != "float32":
            from conba.engine.precision import quantize

            full = self.encode(codes, languages, batch_size, show_progress_bar, normalize, engine=engine,
                               max_batch_tokens=max_batch_tokens, max_windows=max_windows, view=view,
                               prompt_name=prompt_name, prompt=prompt)
            return quantize(np.asarray(full), precision)
        single = isinstance(codes, str)
        codes = [codes] if isinstance(codes, str) else list(codes)
        if isinstance(languages, str) or languages is None:
            languages = [languages or ""] * len(codes)
        languages = list(languages)
        if len(languages) != len(codes):
            raise ConfigError(f"got {len(codes)} codes but {len(languages)} languages")
        if any(not isinstance(c, str) for c in codes):
            raise TypeError("encode() takes strings of code")
        if batch_size is not None and batch_size < 1:
            raise ConfigError("batch_size must be >= 1")
        view = check_view(view or self.view)
        if view != "raw":
            from conba.syntax.view import apply_views

            codes, _ = apply_views(codes, languages, view)
        from conba.engine import ENGINES
        from conba.engine.batching import plan_batches
        from conba.engine.windows import check_max_windows, pool_windows, window_ids
        from conba.settings import apply_threads

        if engine not in ENGINES:
            raise ConfigError(f"unknown engine {engine!r} ({', '.join(ENGINES)})")
        plan = plan_batches(self.device, batch_size, max_batch_tokens)
        self.eval()
        apply_threads()
        out = torch.zeros(len(codes), self.dim)
        if codes:
            cut = window_ids(self.backbone, codes, check_max_windows(
                self.max_windows if max_windows is None else max_windows),
                prompt=self.backbone.prompt(prompt_name, prompt))  # one tokenizer pass
            if show_progress_bar is None:
                show_progress_bar = len(cut.ids) > 4 * plan.batch_size and sys.stderr.isatty()
            windows = self._embed_windows(cut, languages, plan.batch_size, plan.max_tokens, engine,
                                          show_progress_bar)
            if len(cut.ids) == len(codes):
                out = windows
            elif self.window_head is not None:
                from conba.model.window_readout import read_out_windows

                out = read_out_windows(self.window_head, windows, cut.owner, cut.weight, len(codes))
            else:
                out = pool_windows(windows, cut, len(codes))
        if normalize:
            out = torch.nn.functional.normalize(out, dim=-1)
        if single:
            out = out[0]
        if convert_to_tensor:
            return out
        return out.numpy() if convert_to_numpy else out

    def _embed_windows(self, cut: Any, languages: Sequence[str], batch_size: int, max_tokens: int | None,
                       engine: str, show_progress_bar: bool, desc: str = "encode") -> torch.Tensor:
        """Every window of ``cut`` (:func:`conba.engine.windows.window_ids`) through the model in
        length-sorted batches; ``languages``: one per snippet. Returns float32 (c, d) on the CPU, c windows."""
        from tqdm.auto import tqdm

        from conba.engine import length_sorted_batches, pad_token_id
        from conba.engine.batching import DETERMINISTIC

        device, owner = self.device, cut.owner
        if DETERMINISTIC and engine == "onnx":  # dynamic int8: the activation scale is the whole batch's
            batch_size = 1
        bar = tqdm(total=len(cut.ids), desc=desc, unit="window", disable=not show_progress_bar)
        windows = torch.zeros(len(cut.ids), self.dim)
        with self.backbone.prompt_scope(cut.prompt_tokens):
            for batch in length_sorted_batches(cut.ids, batch_size, pad_token_id(self.backbone.tokenizer),
                                               max_tokens, left=self.backbone.left_padding,
                                               same_length=DETERMINISTIC):
                lang_ids = self.head.language_ids([languages[owner[i]] for i in batch.index]).to(device)
                emb = self._embed_batch(batch.input_ids.to(device), batch.attention_mask.to(device), lang_ids,
                                        engine).float()
                windows[batch.index] = emb.cpu()
                bar.update(len(batch.index))
        bar.close()
        return windows

    def encode_query(self, codes: str | Sequence[str], languages: str | Sequence[str] | None = None,
                     **kwargs: Any) -> np.ndarray | torch.Tensor:
        """:meth:`encode` for search queries: with the backbone's query prompt when it has one."""
        kwargs.setdefault("prompt_name", self.backbone.query_prompt_name())
        return self.encode(codes, languages, **kwargs)

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

            out = onnx_encoder(self, engine, prune).token_states(input_ids, attention_mask,
                                                                 self.pruner.config if prune and self.pruner else None)
            return embed_states(self, out.to(attention_mask.device), lang_ids)
        if prune:
            return embed_pruned(self, input_ids, attention_mask, lang_ids)
        if self._own_loop():  # same results as embed_tokens, a little faster (no 4-D mask, no pooler)
            states = dense_states(self.backbone, input_ids, attention_mask)
            return self.head(*self.backbone.read_out(states, attention_mask.bool()), lang_ids)
        return self.embed_tokens(input_ids, attention_mask, lang_ids)

    def _own_loop(self) -> bool:
        """Whether the backbone is a BERT-family encoder whose layers conba can run itself."""

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
            return np.asarray(self.encode(x, languages=languages))
        if isinstance(x, torch.Tensor):
            return x.detach().float().cpu().numpy()
        return np.asarray(x, dtype=np.float32)

    # ------------------------------------------------------------------ persistence
    def fingerprint(self) -> str:
        """Identity of the weights: a hash of the configs and state dicts. A model cast to another precision
        (``model.half()``, ``--dtype float16``) keeps the fingerprint of its weights as loaded."""
        source = getattr(self, "_source_fingerprint", None)
        if source is not None and self.dtype != source[0]:
            return source[1]
        h = hashlib.sha256()
        h.update(json.dumps(self.backbone.config.fingerprint_dict(), sort_keys=True).encode())
        h.update(json.dumps(self.head.config.fingerprint_dict(), sort_keys=True).encode())
        _state_hash(h, self.head.state_dict())
        _state_hash(h, self.backbone.model.state_dict())
        if self.backbone.readout is not None:  # only then: models without one keep their fingerprints
            h.update(json.dumps(self.backbone.readout.config.to_dict(), sort_keys=True).encode())
            _state_hash(h, self.backbone.readout.state_dict())
        if self.window_head is not None:  # likewise: models without one keep their fingerprints
            h.update(json.dumps(self.window_head.config.to_dict(), sort_keys=True).encode())
            _state_hash(h, self.window_head.state_dict())
        return h.hexdigest()[:16]

    def embedding_fingerprint(self) -> str:
        """Identity of the vectors ``encode()`` gives: :meth:`fingerprint` (the weights), combined with
        the SDTP pruner's settings and weights while pruning is on (pruned vectors differ slightly),
        with ``max_windows`` unless it is 1 (long inputs pooled over windows) and with the input view
        unless it is ``raw`` (vectors of two views never mix in an index)."""
        key = self.fingerprint()
        if self.max_windows != 1:
            # "chunks=" is the old word for max_windows, kept byte for byte: indexes and query caches hold this key
            key = hashlib.sha256(f"{key}|chunks={self.max_windows}".encode()).hexdigest()[:16]
        if self.pruner is not None and self.use_pruning:

            key = hashlib.sha256(f"{key}|{pruner_key(self.pruner)}".encode()).hexdigest()[:16]
        if self.view != "raw":
            key = hashlib.sha256(f"{key}|view={self.view}".encode()).hexdigest()[:16]
        return key

    def save(self, directory: str | Path, storage: str = "auto", dtype: str = "float32",
             sentence_transformers: bool = False) -> Path:
        """Save as a folder. storage: 'full', 'delta' (only tensors differing from the embedded
        base; requires the embedded backbone) or 'auto' (delta when possible). ``dtype`` float16 rounds
        the weights in place first, so what is saved loads back exact. ``sentence_transformers``: also
        let ``SentenceTransformer(folder)`` load it (full backbone; :mod:`conba.model.st_export`)."""
        from conba.model.persist import save_model

        if self.cast_from not in (None, self.dtype):  # its fingerprint is the weights' as loaded: they are gone
            raise ConfigError(f"cannot save a model cast to {self.dtype} for inference: save the float32 model "
                              "(save(..., dtype='float16') stores half-precision weights)")
        return save_model(self, directory, storage, dtype, sentence_transformers)

    @classmethod
    def load(cls, directory: str | Path, trust_remote_code: bool = False) -> ConbaModel:
        """Load a folder written by :meth:`save` (checks its format version and weight fingerprint). A
        backbone saved with ``trust_remote_code`` needs it again."""
        from conba.model.persist import load_folder

        return load_folder(cls, directory, trust_remote_code)


def _canonical_backbone(name: str) -> str:
    from conba.encoder.backbone import EMBEDDED_NAME

    return EMBEDDED_NAME if is_embedded(name) else str(name)
