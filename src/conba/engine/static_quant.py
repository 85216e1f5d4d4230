"""Static (calibrated) int8 quantisation of an exported conba backbone, with ONNX Runtime's ``quantize_static``.

Glossary: b batch, l tokens, k kept tokens, d hidden width.

Dynamic int8 (:func:`conba.engine.onnx_export._quantize`) measures every activation's range per batch
at run time; static int8 fixes the ranges once, from calibration snippets run through the float32
export (MinMax: the observed extremes; Percentile: the 0.001st / 99.999th percentiles, outliers clipped). Only the
weight MatMuls / Gemms are quantised (``MatMulConstBOnly``; int8 weights per output channel, uint8
activations), never the SDTP scorers, as in the dynamic recipe. In QDQ format the MatMul outputs
stay float32 by default (ONNX Runtime fuses DQ -> MatMul into an integer MatMul with a float output,
as in dynamic int8); ``float_outputs=False`` quantises them to uint8 too, as QOperator's ``QLinearMatMul`` must.

ONNX Runtime has no static int8 kernel for its fused ``Attention`` op (it is in the dynamic
quantiser's registry only), so on the fused BERT graph the Q/K/V projections stay float32;
``fuse_attention=False`` keeps the attention unfused so they are quantised too. Formats: ``qdq``
(QuantizeLinear/DequantizeLinear pairs, fused by ONNX Runtime at load time) and ``qoperator``
(QLinearMatMul). ``scripts/bench_static_int8.py`` (removed 2026-11-27, in git history) compared them
with dynamic int8: on the 2-core AVX2
dev machine (no VNNI) none was faster (0.97-0.99x with float outputs at dynamic's cosine, 0.75-0.88x
and up to 3.9 MAP@R points worse with uint8 outputs; docs/BENCHMARKS.md), so it is not an engine of ``encode``.

Segments after an SDTP pruning layer take hidden states, not token ids: their calibration inputs are
the hard-pruned outputs of the float32 segments before them (:func:`segment_feeds`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from conba.errors import ConfigError

METHODS = ("minmax", "percentile")
FORMATS = ("qdq", "qoperator")
Feed = dict[str, np.ndarray]  # {"x": (b, l) int64 ids or (b, k, d) float32 hidden, "mask": (b, l|k) int64}
Batches = tuple[tuple[np.ndarray, np.ndarray], ...]  # ((ids, mask), ...), each int64 (b, l)


@dataclass(frozen=True)
class StaticQuant:
    """How to quantise statically. ``batches``: segment-0 calibration inputs, (ids, mask) pairs of
    int64 (b, l) arrays (:func:`calibration_batches`)."""

    batches: Batches
    method: str = "minmax"
    format: str = "qdq"
    percentile: float = 99.999
    fuse_attention: bool = True
    float_outputs: bool = True  # QDQ: MatMul outputs stay float32 (QLinearMatMul's are always uint8)

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"unknown calibration method {self.method!r} ({', '.join(METHODS)})")
        if self.format not in FORMATS:
            raise ConfigError(f"unknown quantisation format {self.format!r} ({', '.join(FORMATS)})")
        if not self.batches:
            raise ConfigError("static quantisation needs at least one calibration batch")
        if not 50.0 < self.percentile <= 100.0:
            raise ConfigError(f"percentile must be in (50, 100], got {self.percentile}")

    @property
    def name(self) -> str:
        """A short label, e.g. ``static-qdq-minmax`` (``-unfused``: without the fused Attention op;
        ``-qout``: QDQ with uint8 MatMul outputs)."""
        return (f"static-{self.format}-{self.method}" + ("" if self.fuse_attention else "-unfused")
                + ("-qout" if self.format == "qdq" and not self.float_outputs else ""))


def calibration_batches(model, codes: Sequence[str], languages: str | Sequence[str] | None = None,
                        batch_size: int = 16, max_tokens: int | None = 4096) -> Batches:
    """The snippets as ``model.encode`` feeds them to the backbone (input view, windows, length-sorted
    padded batches). Returns ((ids, mask), ...), each int64 (b, l)."""
    from conba.engine.batching import length_sorted_batches, pad_token_id
    from conba.engine.windows import window_ids
    from conba.syntax.view import apply_views

    codes = list(codes)
    if not codes:
        raise ConfigError("static quantisation needs calibration snippets, got none")
    if isinstance(languages, str) or languages is None:
        languages = [languages or ""] * len(codes)
    if len(languages) != len(codes):
        raise ConfigError(f"got {len(codes)} calibration snippets but {len(languages)} languages")
    if model.view != "raw":
        codes, _ = apply_views(codes, list(languages), model.view)
    cut = window_ids(model.backbone, codes, model.max_windows)
    pad = pad_token_id(model.backbone.tokenizer)
    return tuple((b.input_ids.numpy(), b.attention_mask.numpy())
                 for b in length_sorted_batches(cut.ids, batch_size, pad, max_tokens))


def segment_feeds(paths: Sequence[Path], batches: Batches, prune) -> list[list[Feed]]:
    """Calibration inputs of every segment: segment 0 gets ``batches``; segment s + 1 the outputs of
    float32 segment s, hard-pruned with ``prune`` (a PruneConfig; needed with more than one segment)."""
    import onnxruntime as ort

    from conba.encoder.sdtp.mask import hard_keep_indices

    feeds: list[list[Feed]] = [[{"x": ids, "mask": mask} for ids, mask in batches]]
    for s in range(len(paths) - 1):
        sess = ort.InferenceSession(str(paths[s]), providers=["CPUExecutionProvider"])
        nxt = []
        for feed in feeds[s]:
            hidden, score = sess.run(None, feed)
            index, mask = hard_keep_indices(torch.from_numpy(score), torch.from_numpy(feed["mask"]).bool(),
                                            prune.keep_ratio, prune.keep_first, prune.keep_tail)
            x = np.ascontiguousarray(np.take_along_axis(hidden, index.numpy()[:, :, None], axis=1))
            nxt.append({"x": x, "mask": mask.numpy().astype(np.int64)})
        feeds.append(nxt)
    return feeds


def calibration_reader(feeds: list[Feed]):
    """An ONNX Runtime CalibrationDataReader over ``feeds``."""
    from onnxruntime.quantization import CalibrationDataReader

    class FeedReader(CalibrationDataReader):
        """Hands ``quantize_static`` one prepared feed per call, then None; ``set_range`` limits it to
        ``feeds[start:end]`` (ONNX Runtime's strided calibration)."""

        def __init__(self) -> None:
            self.set_range(0, len(feeds))

        def __len__(self) -> int:
            return len(feeds)

        def get_next(self) -> Feed | None:
            return next(self._it, None)

        def set_range(self, start_index: int, end_index: int) -> None:
            self.start, self.end = start_index, end_index
            self.rewind()

        def rewind(self) -> None:
            self._it = iter(feeds[self.start:self.end])

    return FeedReader()


def quantize_segment(src: Path, dst: Path, feeds: list[Feed], cfg: StaticQuant) -> None:
    """Statically quantise one float32 segment ``src`` into ``dst``, calibrated on ``feeds``."""
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # ONNX's own shape inference stops at ORT's fused ops (Attention, SkipLayerNormalization), and the
    # calibrator only records tensors with a known type: without ORT's symbolic shape inference it
    # silently calibrates (and quantises) nothing after the first fused op
    shaped = dst.with_name(dst.stem + ".shaped.onnx")
    quant_pre_process(str(src), str(shaped), skip_optimization=True, auto_merge=True)
    src = shaped
    model = onnx.load(str(src))
    skip = [n.name for n in model.graph.node if "scorer" in n.name]
    # CalibStridedMinMax=1 (any method, despite the name): statistics are gathered one batch at a time and
    # merged, so batches of different lengths work (Percentile stacks a call's outputs into one array)
    # and memory stays at one batch's activations instead of all of them
    extra: dict[str, Any] = {"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT,
                             "CalibStridedMinMax": 1}
    if cfg.format == "qdq" and cfg.float_outputs:
        extra["OpTypesToExcludeOutputQuantization"] = ["MatMul", "Gemm"]
    if cfg.method == "percentile":
        extra["CalibPercentile"] = cfg.percentile
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs a "pre-processing" hint on the root logger
    try:
        quantize_static(str(src), str(dst), calibration_reader(feeds),
                        quant_format=QuantFormat.QDQ if cfg.format == "qdq" else QuantFormat.QOperator,
                        op_types_to_quantize=["MatMul", "Gemm"], per_channel=True, nodes_to_exclude=skip,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax if cfg.method == "minmax"
                        else CalibrationMethod.Percentile, extra_options=extra)
    finally:
        root.setLevel(level)
        shaped.unlink(missing_ok=True)


def quantize_segments(fp32: Sequence[Path], out: Sequence[Path], cfg: StaticQuant, prune) -> None:
    """Quantise every float32 segment (``fp32[s]`` -> ``out[s]``); ``prune``: the export's PruneConfig."""
    feeds = segment_feeds(fp32, cfg.batches, prune)
    for src, dst, f in zip(fp32, out, feeds, strict=True):
        quantize_segment(src, dst, f, cfg)
