"""Run an exported conba backbone with ONNX Runtime (CPU), with SDTP hard pruning between segments.

Glossary: b batch, l tokens, k kept tokens, d hidden width.

Sessions use ``CONBA_THREADS`` intra-op threads (default: torch's thread count, i.e. the physical
cores), one inter-op thread and sequential execution: on a small CPU, parallel operators only
compete for the same cores. Exports are cached under ``$CONBA_CACHE/onnx/`` (default
``~/.cache/conba/onnx/``), keyed by the model fingerprint, the pruner, int8/fp32 and the ONNX Runtime
version, so they are built once (about half a minute for MiniLM).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from conba.encoder.sdtp.config import PruneConfig
from conba.encoder.sdtp.mask import hard_keep_indices
from conba.encoder.sdtp.pruned import PrunedStates, dropped_sum
from conba.encoder.sdtp.scorer import pruner_key
from conba.engine.onnx_export import MANIFEST, export_onnx, read_manifest, require_onnx
from conba.errors import ConfigError, FormatError
from conba.heads.prefix import require_no_prefix
from conba.settings import requested_threads

EXPORT_VERSION = 2  # bump when the export recipe changes (cached exports are rebuilt)


class OnnxEncoder:
    """Segments of one export. :meth:`token_states` mirrors ``Backbone`` + SDTP hard pruning."""

    def __init__(self, directory: str | Path, threads: int | None = None):
        require_onnx()
        import onnxruntime as ort

        self.directory = Path(directory)
        self.manifest = read_manifest(self.directory)
        if self.manifest.get("format") != "conba-onnx":
            raise FormatError(f"{self.directory}: not a conba ONNX export")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or requested_threads() or torch.get_num_threads()
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        if len(self.manifest["files"]) > 1:
            # every session has its own thread pool, whose threads spin-wait after a run: with several
            # segments (SDTP) the idle pools would steal the cores from the running one
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.sessions = [ort.InferenceSession(str(self.directory / f), opts, providers=["CPUExecutionProvider"])
                         for f in self.manifest["files"]]
        prune = self.manifest.get("prune")
        self.prune = PruneConfig.from_dict(prune) if prune else None

    def token_states(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                     prune: PruneConfig | None = None) -> PrunedStates:
        """Args: input_ids, attention_mask: shape (b, l); prune: keep rule to apply between segments
        (default: the one exported). Returns PrunedStates (hidden (b, k, d) float32, mask bool (b, k))."""
        x = input_ids.cpu().numpy().astype(np.int64, copy=False)
        mask = attention_mask.cpu().bool()
        n_tokens = mask.sum(dim=1)
        cfg = prune or self.prune
        exit_sum = None
        last = len(self.sessions) - 1
        hidden = None
        for i, sess in enumerate(self.sessions):
            outs = sess.run(None, {"x": x, "mask": mask.numpy().astype(np.int64)})
            hidden = outs[0]
            if i < last:  # several sessions: a pruned model, cfg is its pruning
                assert cfg is not None
                index, new_mask = hard_keep_indices(torch.from_numpy(outs[1]), mask, cfg.keep_ratio, cfg.keep_first,
                                                    cfg.keep_tail)
                if cfg.pool_pruned:
                    dropped = dropped_sum(torch.from_numpy(hidden), mask, index, new_mask)
                    exit_sum = dropped if exit_sum is None else exit_sum + dropped
                x = np.ascontiguousarray(np.take_along_axis(hidden, index.numpy()[:, :, None], axis=1))
                mask = new_mask
        return PrunedStates(torch.from_numpy(hidden), mask, exit_sum, n_tokens)


def export_dir(model, quantize: bool, prune: bool) -> Path:
    """Where the export of this model / pruner / precision is cached."""
    import onnxruntime as ort

    from conba.settings import default_cache_dir

    pruner = model.pruner if prune else None
    name = f"{model.fingerprint()}-{pruner_key(pruner)}-{'int8' if quantize else 'fp32'}-ort{ort.__version__}" \
           f"-v{EXPORT_VERSION}"
    return default_cache_dir() / "onnx" / name


def onnx_encoder(model, engine: str, prune: bool) -> OnnxEncoder:
    """The cached ONNX encoder of ``model`` for engine 'onnx' (int8) or 'onnx-fp32', exported on first use.

    Built from the weights at first use; after changing weights call ``model._engines.clear()``.
    """
    require_onnx()
    require_no_prefix(model.head, "the ONNX engine")
    if engine not in ("onnx", "onnx-fp32"):
        raise ConfigError(f"unknown ONNX engine {engine!r} (onnx, onnx-fp32)")
    prune = bool(prune and model.pruner is not None)
    key = (engine, prune)
    enc = model._engines.get(key)
    if enc is None:
        directory = export_dir(model, quantize=engine == "onnx", prune=prune)
        if not (directory / MANIFEST).exists():
            # processes sharing the cache (Ray actors of one node, parallel jobs) export once, instead of
            # replacing each other's folder; filelock is a maintained, cross-platform lock file
            from filelock import FileLock

            directory.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(directory) + ".lock"):
                if not (directory / MANIFEST).exists():
                    export_onnx(model, directory, quantize=engine == "onnx", prune=prune)
        enc = OnnxEncoder(directory)
        model._engines[key] = enc
    return enc
