"""The query encoder: a conba model exported once to float32 ONNX, run without torch or transformers.

Glossary: n snippets, c windows in all, f windows per snippet at most, d model width.

Commands that only encode a query or two (``conba search``, ``conba compare``, ``conba serve``, the Python
``Index.search``) spent most of their time importing torch and transformers and loading weights, for one
forward pass of milliseconds. A model that can be exported (:func:`conba.engine.query_export.export_query_encoder`)
is written once to a folder of the cache (``$CONBA_CACHE/query/KEY``) holding

* ``model.onnx`` (weights in ``model.data``): token ids and mask (b, l) -> each window's vector (b, d),
  unnormalised: the backbone, its read-out and the head, as ``ConbaModel.encode`` runs them on one window;
* ``fragment_head.onnx`` (models with a window head; the file-format name, as in the model folder): windows
  (n, f, d), mask, weights -> (n, d);
* ``tokenizer.json``: the backbone's fast tokenizer, read by ``tokenizers``;
* ``manifest.json``: the windowing (max length, special tokens, ``max_windows``), the input view, the
  fingerprints, thresholds and lexical weight of the model.

:class:`QueryEncoder` then encodes with ONNX Runtime, ``tokenizers`` and numpy only, through the same
windowing code as the torch path (:func:`conba.engine.windows.window_ids`). ``KEY`` is the model folder's
stamp (its files' names, sizes and times, the view and load options): a changed model is another key, and
the export is made again from the new weights. Set ``CONBA_QUERY_ENGINE=torch`` to always encode with torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conba.engine.batching import CPU_BATCH_SIZE, CPU_BATCH_TOKENS, DETERMINISTIC, length_sorted_rows, pad_arrays
from conba.engine.windows import window_ids
from conba.errors import ConfigError, FormatError

__all__ = ["ENGINE_ENV", "EXPORT_VERSION", "MANIFEST", "QueryEncoder", "cache_dir", "folder_key", "load_cached",
           "wanted"]
MANIFEST = "manifest.json"
FORMAT = "conba-query-encoder"
EXPORT_VERSION = 2  # 2: weights in model.data. Bump when the export recipe changes: older folders are not read
ENGINE_ENV = "CONBA_QUERY_ENGINE"  # "torch": never use the ONNX query encoder


def wanted() -> bool:
    """Whether commands may use the ONNX query encoder (``CONBA_QUERY_ENGINE`` is not ``torch``) and
    ONNX Runtime is installed."""
    value = os.environ.get(ENGINE_ENV, "").strip().lower()
    if value not in ("", "auto", "onnx", "torch"):
        raise ConfigError(f"{ENGINE_ENV} must be auto, onnx or torch, got {value!r}")
    if value == "torch":
        return False
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None


def folder_key(folder: Path, view: str, options: dict[str, Any]) -> str:
    """The cache key of the export of the model folder ``folder`` with input ``view`` and load ``options``."""
    from conba.utils.model_files import folder_files

    payload = {"folder": str(folder), "files": folder_files(folder), "view": view, "options": options,
               "version": EXPORT_VERSION}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


def cache_dir(key: str) -> Path:
    """Where the export with ``key`` lives: ``$CONBA_CACHE/query/KEY``."""
    from conba.settings import default_cache_dir

    return default_cache_dir() / "query" / key


def load_cached(key: str) -> QueryEncoder | None:
    """The cached export with ``key``, or None (none yet, or unreadable: it is made again)."""
    folder = cache_dir(key)
    if not (folder / MANIFEST).is_file():
        return None
    try:
        return QueryEncoder(folder)
    except (OSError, ValueError, KeyError, FormatError):
        return None
    except Exception as exc:  # onnxruntime's own errors (a truncated file): export again
        if type(exc).__module__.startswith("onnxruntime"):
            return None
        raise


class _Tokenizer:
    """A ``tokenizers.Tokenizer`` called as a transformers tokenizer is (what :func:`window_ids` calls)."""

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()

    def __call__(self, text: str | Sequence[str], add_special_tokens: bool = True, **_: Any) -> dict[str, Any]:
        if isinstance(text, str):
            return {"input_ids": self._tok.encode(text, add_special_tokens=add_special_tokens).ids}
        return {"input_ids": [e.ids for e in self._tok.encode_batch(list(text), add_special_tokens=add_special_tokens)]}


class QueryEncoder:
    """An exported model (see the module docstring) with the part of ``ConbaModel``'s interface that the
    query commands use: ``encode``, ``encode_query``, ``view``, ``dim``, ``threshold``, ``clone_threshold``,
    ``lexical_weight``, ``max_windows``, ``fingerprint()`` and ``embedding_fingerprint()``."""

    engine = "onnx-query"  # what ran; not an index engine (its vectors match torch's, see docs/speed.md)

    def __init__(self, directory: str | Path, threads: int | None = None):
        import onnxruntime as ort

        from conba.settings import requested_threads

        self.directory = Path(directory)
        try:
            self.manifest = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FormatError(f"{self.directory / MANIFEST}: missing or corrupt ({exc})") from None
        m = self.manifest
        if m.get("format") != FORMAT or m.get("version") != EXPORT_VERSION:
            raise FormatError(f"{self.directory}: not a conba query encoder of version {EXPORT_VERSION}")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or requested_threads() or 0  # 0: ONNX Runtime's default (the cores)
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(str(self.directory / m["model"]), opts,
                                             providers=["CPUExecutionProvider"])
        head_file = m.get("fragment_head")  # the manifest's file-format name of the window head
        self._window_head = None if not head_file else ort.InferenceSession(
            str(self.directory / head_file), opts, providers=["CPUExecutionProvider"])
        self.tokenizer = _Tokenizer(self.directory / m["tokenizer"])
        self.max_length = int(m["max_length"])
        self.max_windows = m.get("max_chunks")  # the manifest's file-format name of max_windows
        self.view = m.get("view") or "raw"
        self.dim = int(m["dim"])
        self.threshold = m.get("threshold")
        self.clone_threshold = m.get("clone_threshold")
        self.lexical_weight = float(m.get("lexical_weight") or 0.0)
        self._split_identifiers = bool(m.get("split_identifiers"))

    # the parts of a Backbone that window_ids reads
    def preprocess(self, code: str) -> str:
        from conba.text import split_identifiers

        return split_identifiers(code) if self._split_identifiers else code

    def fingerprint(self) -> str:
        return str(self.manifest["fingerprint"])

    def embedding_fingerprint(self) -> str:
        return str(self.manifest["embedding_fingerprint"])

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode_query(self, codes: str | Sequence[str], languages: str | Sequence[str] | None = None,
                     **kwargs: Any) -> np.ndarray:
        """:meth:`encode` for search queries (the exported models have no prompts: the same vectors)."""
        return self.encode(codes, languages, **kwargs)

    def encode(self, codes: str | Sequence[str], languages: str | Sequence[str] | None = None,
               batch_size: int | None = None, show_progress_bar: bool | None = None, normalize: bool = True,
               engine: str | None = None, view: str | None = None, **_: Any) -> np.ndarray:
        """float32 (n, d) numpy, in input order (one snippet: (d,)), as ``ConbaModel.encode`` gives them on
        the CPU: the input ``view`` (default: the model's), windows of long snippets read by the window head
        (or averaged), L2-normalised unless ``normalize`` is False. ``engine`` and the torch-only options are
        ignored."""
        single = isinstance(codes, str)
        codes = [codes] if isinstance(codes, str) else list(codes)
        if isinstance(languages, str) or languages is None:
            languages = [str(languages or "")] * len(codes)
        languages = [str(lang) for lang in languages]
        if len(languages) != len(codes):
            raise ConfigError(f"got {len(codes)} codes but {len(languages)} languages")
        if any(not isinstance(c, str) for c in codes):
            raise TypeError("encode() takes strings of code")
        view = view or self.view
        if view != "raw":
            from conba.syntax.view import apply_views, check_view

            codes, _view_stats = apply_views(codes, languages, check_view(view))
        out = np.zeros((len(codes), self.dim), np.float32)
        if codes:
            cut = window_ids(self, codes, self.max_windows)
            windows = self._windows(cut.ids, batch_size or CPU_BATCH_SIZE)
            out = windows if len(cut.ids) == len(codes) else self._read_out(windows, cut.owner,
                                                                              cut.weight, len(codes))
        if normalize:
            out = out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out[0] if single else out

    def _windows(self, ids: list[list[int]], batch_size: int) -> np.ndarray:
        """Every window through ``model.onnx`` in length-sorted batches. Returns (c, d) float32."""
        m = self.manifest
        out = np.zeros((len(ids), self.dim), np.float32)
        for index in length_sorted_rows(ids, batch_size, CPU_BATCH_TOKENS, DETERMINISTIC):
            x, mask = pad_arrays([ids[i] for i in index], int(m["pad_id"]), bool(m.get("left_padding")))
            out[index] = self._session.run(None, {"input_ids": x, "attention_mask": mask})[0]
        return out

    def _read_out(self, windows: np.ndarray, owner: list[int], weight: list[int], n: int) -> np.ndarray:
        """One vector per snippet: its window when it has one, else the window head's read-out of its
        windows in order (without one: their token-weighted mean), as ``ConbaModel.encode``."""
        owner_a = np.asarray(owner)
        count = np.bincount(owner_a, minlength=n)
        first = np.cumsum(count) - count
        out = windows[first].copy()
        many = np.flatnonzero(count > 1)
        if not len(many):
            return out
        f = int(count.max())
        x = np.zeros((len(many), f, windows.shape[1]), np.float32)
        mask = np.zeros((len(many), f), bool)
        w = np.zeros((len(many), f), np.float32)
        for row, snippet in enumerate(many):
            k = count[snippet]
            x[row, :k] = windows[first[snippet]:first[snippet] + k]
            mask[row, :k] = True
            w[row, :k] = weight[first[snippet]:first[snippet] + k]
        if self._window_head is not None:
            out[many] = self._window_head.run(None, {"x": x, "mask": mask, "weight": w})[0]
        else:  # conba.engine.windows.pool_windows
            out[many] = (x * w[..., None]).sum(axis=1) / np.maximum(w.sum(axis=1), 1.0)[:, None]
        return out
