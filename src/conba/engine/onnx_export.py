"""Export a conba backbone (and its SDTP scorers) to ONNX, optionally with dynamic int8 quantisation.

Glossary: b batch, l tokens, d hidden width, L layers.

The backbone is cut into *segments* at the SDTP pruning layers: segment 0 = embeddings + layers
[0, p1), segment s = layers [p_s, p_{s+1}), the last one ends at L. Every segment but the last also
outputs the keep score of the tokens entering the next pruning layer, so the runtime can do the hard
top-k between segments (:mod:`conba.engine.onnx_runtime`). Without pruning there is one segment.

Pipeline per segment: ``torch.onnx.export`` (TorchScript exporter, dynamic batch and length, eager
attention so ONNX Runtime's BERT fusions match) -> ``onnxruntime.transformers.optimizer`` (fused
attention, skip-layer-norm, bias-GELU) -> for int8, ``onnxruntime.quantization.quantize_dynamic``
(int8 weights per output channel, activations quantised per batch at run time; scorer MatMuls stay
float32; or, with ``static``, ``quantize_static`` calibrated on snippets: :mod:`conba.engine.static_quant`).
Per-channel weights matter: per-tensor int8 gave cosines to the float model down to 0.96 on
atcoder snippets, per-channel 0.995 (measured while building the engine).
A ``manifest.json`` lists the files, the pruning settings and the model fingerprint.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import nn

from conba.encoder import adapter
from conba.encoder.adapter_bert import bert_layer, is_bert_layer
from conba.encoder.layers import embed_input, extended_mask, require_own_loop, run_layer, run_layers
from conba.encoder.sdtp.scorer import keep_score
from conba.errors import ConbaError
from conba.heads.prefix import require_no_prefix
from conba.utils.io import replace_dir, write_json_atomic

if TYPE_CHECKING:
    from conba.engine.static_quant import StaticQuant

MANIFEST = "manifest.json"
OPSET = 17


class OnnxUnavailable(ConbaError, RuntimeError):
    """onnxruntime / onnx are not installed."""


def require_onnx() -> None:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        raise OnnxUnavailable("the ONNX engine needs onnxruntime and onnx: pip install 'conba[onnx]' "
                              "(or pip install onnxruntime onnx)") from None


class Segment(nn.Module):
    """layers[start:end] of a backbone (after the embeddings when ``embed``), plus an optional scorer.

    forward(x, mask): x is input_ids (b, l) int64 when ``embed`` else hidden states (b, l, d); mask is
    (b, l) int64 0/1. Returns hidden (b, l, d), and with a scorer also the keep score (b, l).
    """

    def __init__(self, backbone, start: int, end: int, embed: bool, scorer: nn.Module | None = None):
        super().__init__()
        self.backbone = backbone
        self.start, self.end, self.embed = start, end, embed
        self.scorer = scorer

    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        hidden = embed_input(self.backbone, x) if self.embed else x
        heads = adapter.num_heads(self.backbone.model.config)

        def export_layer(layer, hidden: torch.Tensor, ext: torch.Tensor) -> torch.Tensor:
            return bert_layer(layer, hidden, ext, heads) if is_bert_layer(layer) else run_layer(layer, hidden, ext)

        hidden, _ = run_layers(self.backbone.layers, hidden, mask, self.start, self.end, attention=extended_mask,
                               layer_fn=export_layer)
        if self.scorer is None:
            return hidden
        return hidden, keep_score(self.scorer(hidden))


def segment_bounds(num_layers: int, prune_layers: list[int] | None) -> list[tuple[int, int]]:
    """[(start, end), ...] covering 0..L, cut at each pruning layer."""
    cuts = [0] + sorted(prune_layers or []) + [num_layers]
    return [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]


def _eager(hf_model):
    """Context: switch the HF model to eager attention for export (ORT's fusions expect that graph)."""
    class _Ctx:
        def __enter__(self):
            self.old = hf_model.config._attn_implementation
            try:
                hf_model.set_attn_implementation("eager")
            except (AttributeError, ValueError):
                hf_model.config._attn_implementation = "eager"

        def __exit__(self, *exc):
            try:
                hf_model.set_attn_implementation(self.old)
            except (AttributeError, ValueError):
                hf_model.config._attn_implementation = self.old
    return _Ctx()


def _export_segment(seg: Segment, path: Path, hidden_size: int) -> None:
    b, l = 2, 16
    x = torch.randint(5, 100, (b, l)) if seg.embed else torch.randn(b, l, hidden_size)
    mask = torch.ones(b, l, dtype=torch.int64)
    outputs = ["hidden", "score"] if seg.scorer is not None else ["hidden"]
    axes = {"x": {0: "b", 1: "l"}, "mask": {0: "b", 1: "l"}, "hidden": {0: "b", 1: "l"}, "score": {0: "b", 1: "l"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(seg, (x, mask), str(path), input_names=["x", "mask"], output_names=outputs,
                          dynamic_axes={k: v for k, v in axes.items() if k in ["x", "mask", *outputs]},
                          opset_version=OPSET, dynamo=False, do_constant_folding=True)


def _optimize(path: Path, num_heads: int, hidden_size: int, fuse_attention: bool = True) -> bool:
    """ORT's BERT fusions in place (without the Attention fusion when not ``fuse_attention``); False
    (file unchanged) when the optimizer fails."""
    try:
        from onnxruntime.transformers.fusion_options import FusionOptions
        from onnxruntime.transformers.optimizer import optimize_model

        options = FusionOptions("bert")
        options.enable_attention = fuse_attention
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = optimize_model(str(path), model_type="bert", num_heads=num_heads, hidden_size=hidden_size,
                                 opt_level=1, use_gpu=False, optimization_options=options)
        opt.save_model_to_file(str(path))
        return True
    except Exception:  # an unsupported graph: keep the plain export
        return False


def _quantize(src: Path, dst: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(src))
    skip = [n.name for n in model.graph.node if "scorer" in n.name]
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_dynamic logs a "pre-processing" hint on the root logger
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=skip,
                         op_types_to_quantize=["MatMul", "Attention", "Gemm"],
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        root.setLevel(level)


def export_onnx(model, directory: str | Path, quantize: bool = True, prune: bool = True,
                optimize: bool = True, static: StaticQuant | None = None) -> Path:
    """Write the segments and ``manifest.json`` of ``model`` to ``directory`` (built in a temporary
    folder, then moved into place). ``prune``: cut at the pruner's layers and export its scorers.
    ``static``: quantise statically (calibrated, :mod:`conba.engine.static_quant`) instead of dynamically."""
    require_onnx()
    require_no_prefix(model.head, "the ONNX engine")
    directory = Path(directory)
    backbone = model.backbone
    require_own_loop(backbone, "the ONNX engine")
    pruner = model.pruner if (prune and getattr(model, "pruner", None) is not None) else None
    layers = list(pruner.config.layers) if pruner is not None else []
    cfg = backbone.model.config
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".onnx-", dir=directory.parent))
    try:
        quantize = quantize or static is not None
        fuse = static is None or static.fuse_attention
        optimized = []
        bounds = segment_bounds(backbone.num_layers, layers)
        fp32 = [tmp / f"segment{i}.fp32.onnx" for i in range(len(bounds))]
        with torch.no_grad(), _eager(backbone.model):
            for i, (start, end) in enumerate(bounds):
                scorer = pruner.scorers[str(end)] if pruner is not None and i < len(bounds) - 1 else None
                seg = Segment(backbone, start, end, embed=(i == 0), scorer=scorer).eval()
                _export_segment(seg, fp32[i], backbone.hidden_size)
                if optimize:
                    optimized.append(_optimize(fp32[i], adapter.num_heads(cfg), backbone.hidden_size, fuse))
        files = [f"segment{i}.{'int8' if quantize else 'fp32'}.onnx" for i in range(len(bounds))]
        if static is not None:
            from conba.engine.static_quant import quantize_segments

            quantize_segments(fp32, [tmp / f for f in files], static, pruner.config if pruner is not None else None)
        elif quantize:
            for src, name in zip(fp32, files, strict=True):
                _quantize(src, tmp / name)
        if quantize:
            for src in fp32:
                src.unlink()
        manifest = {
            "format": "conba-onnx", "files": files, "quantized": quantize, "optimized": optimized,
            "quantization": (static.name if static is not None else "dynamic") if quantize else None,
            "prune": pruner.config.to_dict() if pruner is not None else None,
            "fingerprint": model.fingerprint(), "hidden_size": backbone.hidden_size, "opset": OPSET,
        }
        write_json_atomic(tmp / MANIFEST, manifest)
        directory.parent.mkdir(parents=True, exist_ok=True)
        replace_dir(tmp, directory)  # crash-safe: the previous export or its .old stays whole
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return directory


def read_manifest(directory: str | Path) -> dict:
    path = Path(directory) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise FileNotFoundError(f"{path}: missing or corrupt ONNX manifest ({exc})") from None
