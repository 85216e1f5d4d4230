"""Export a ``ConbaModel`` to the query encoder folder read by :class:`conba.engine.query_encoder.QueryEncoder`.

Glossary: b batch, l tokens, n snippets, f windows per snippet, d model width.

``model.onnx`` is one float32 graph from token ids to a window's vector: the embeddings and layers as conba
runs them for its ONNX engine (:class:`conba.engine.onnx_export.Segment`, eager attention; backbones conba
cannot run layer by layer: their own forward), then the backbone's read-out and the head, exactly
``ConbaModel._embed_batch`` on the torch engine. A window head is exported as a second graph over the
windows of long snippets (its reader, :meth:`WindowHead._read`). The weights go to ``model.data``
(external data, mapped at load). No ONNX Runtime graph optimisation is saved, so the files do not depend
on its version. The tokenizer is saved as ``tokenizer.json``.

Models the export refuses (:class:`NotExportable`; they keep encoding with torch): an SDTP token pruner in
use (its top-k between layers), prefix or offset language control codes (the vector depends on the query's
language), read-outs with prompts, tokenizers without a fast (``tokenizers``) version, and any graph the
exporter cannot trace.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from conba.engine.query_encoder import EXPORT_VERSION, FORMAT, MANIFEST
from conba.engine.windows import special_template
from conba.errors import ConbaError
from conba.utils.io import replace_dir, write_json_atomic

__all__ = ["NotExportable", "export_query_encoder", "exportable"]
OPSET = 17


class NotExportable(ConbaError, RuntimeError):
    """The model cannot be exported to the query encoder; it encodes queries with torch."""


def exportable(model: Any) -> str | None:
    """None when ``model`` can be exported, else why not (one phrase)."""
    if getattr(model, "pruner", None) is not None and model.use_pruning:
        return "it prunes tokens (SDTP)"
    head = model.head
    if head.depends_on_language:
        return "its vectors depend on the query's language (control codes)"
    readout = model.backbone.readout
    if readout is not None and readout.config.prompts:
        return "its read-out has prompts"
    if not hasattr(model.backbone.tokenizer, "backend_tokenizer"):
        return "its tokenizer has no fast (tokenizers) version"
    if model.cast_from not in (None, model.dtype) or model.dtype != torch.float32 or model.device.type != "cpu":
        return "it is not a float32 model on the CPU"
    return None


class _Windows(nn.Module):
    """Token ids and mask (b, l) int64 -> each window's vector (b, d), as the torch engine gives it."""

    def __init__(self, model: Any):
        super().__init__()
        self.model = model
        from conba.encoder.layers import supports_own_loop

        self.own_loop = supports_own_loop(model.backbone)
        if self.own_loop:
            from conba.engine.onnx_export import Segment

            self.segment = Segment(model.backbone, 0, model.backbone.num_layers, embed=True)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        m = self.model
        lang_ids = torch.zeros(input_ids.shape[0], dtype=torch.long)
        if not self.own_loop:
            return m.embed_tokens(input_ids, attention_mask, lang_ids)
        states = self.segment(input_ids, attention_mask)
        return m.head(*m.backbone.read_out(states, attention_mask.bool()), lang_ids)


class _Reader(nn.Module):
    """The window head's reader over the windows of long snippets: x (n, f, d), mask (n, f), weight (n, f)."""

    def __init__(self, head: nn.Module):
        super().__init__()
        self.head = head

    def forward(self, x: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        read: Any = self.head._read  # the window head's read-out (nn.Module attributes type as Tensor | Module)
        return read(x, mask, weight * mask.to(weight.dtype))


def _export(module: nn.Module, args: tuple, path: Path, inputs: list[str], axes: dict[str, dict[int, str]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, str(path), input_names=inputs, output_names=["out"],
                          dynamic_axes=axes, opset_version=OPSET, dynamo=False, do_constant_folding=True)


def _weights_apart(path: Path) -> None:
    """Move the graph's weights to ``model.data`` beside it (ONNX external data): ONNX Runtime then maps them
    instead of parsing them out of the protobuf, which halved its session start (1.2-1.9 s -> 0.8-1.0 s for
    MiniLM on the loaded 2-core machine). Without the ``onnx`` package the file stays whole."""
    try:
        import onnx
    except ImportError:
        return
    graph = onnx.load(str(path))
    onnx.save_model(graph, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.data", size_threshold=1024)


def export_query_encoder(model: Any, directory: str | Path) -> Path:
    """Write the query encoder of ``model`` (float32, on the CPU, in eval mode) to ``directory``, built
    beside it and moved into place. Raises :class:`NotExportable` with the reason when it cannot."""
    why = exportable(model)
    if why is not None:
        raise NotExportable(f"the model cannot run without torch: {why}")
    from conba.engine.onnx_export import _eager

    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".query-", dir=directory.parent))
    backbone = model.backbone
    model.eval()
    try:
        ids = torch.randint(5, 100, (2, 16))
        mask = torch.ones(2, 16, dtype=torch.int64)
        mask[1, 12:] = 0
        axes = {"input_ids": {0: "b", 1: "l"}, "attention_mask": {0: "b", 1: "l"}, "out": {0: "b"}}
        try:
            with torch.no_grad(), _eager(backbone.model):
                _export(_Windows(model).eval(), (ids, mask), tmp / "model.onnx", ["input_ids", "attention_mask"], axes)
                _weights_apart(tmp / "model.onnx")
                head_file = None
                if model.window_head is not None and model.max_windows != 1:
                    head_file = "fragment_head.onnx"  # file-format names (this and the manifest's keys), kept
                    x = torch.randn(2, 3, model.dim)
                    m = torch.tensor([[True, True, True], [True, True, False]])
                    w = torch.tensor([[5.0, 4.0, 2.0], [7.0, 3.0, 0.0]])
                    window_axes = {0: "n", 1: "f"}
                    _export(_Reader(model.window_head).eval(), (x, m, w), tmp / head_file, ["x", "mask", "weight"],
                            {"x": window_axes, "mask": window_axes, "weight": window_axes, "out": {0: "n"}})
        except Exception as exc:  # the exporter's errors are many and version-dependent: say which, keep torch
            raise NotExportable(f"the ONNX exporter failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") \
                from None
        backbone.tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
        prefix, suffix = special_template(backbone.tokenizer)
        manifest = {
            "format": FORMAT, "version": EXPORT_VERSION, "model": "model.onnx", "fragment_head": head_file,
            "tokenizer": "tokenizer.json", "max_length": backbone.max_length, "special": [prefix, suffix],
            "pad_id": backbone.pad_id, "left_padding": backbone.left_padding,
            "split_identifiers": bool(backbone.config.split_identifiers), "max_chunks": model.max_windows,
            "view": model.view, "dim": model.dim, "fingerprint": model.fingerprint(),
            "embedding_fingerprint": model.embedding_fingerprint(), "threshold": model.threshold,
            "clone_threshold": model.clone_threshold, "lexical_weight": float(model.lexical_weight or 0.0),
            "opset": OPSET, "torch": torch.__version__,
        }
        write_json_atomic(tmp / MANIFEST, manifest)
        replace_dir(tmp, directory)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return directory
