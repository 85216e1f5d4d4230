"""Heads: token states of a code encoder -> one embedding per snippet.

Glossary (dimension letters, as in mamba-minimal):
    b: batch size
    l: sequence length (padding included)
    d: model width (backbone hidden size, ``HeadConfig.dim``)
    n: SSM state size (``HeadConfig.state_dim``)
    c: control-code width (``HeadConfig.code_dim``)

Kinds: "conba" (seed ConbaLayer, pooled or over tokens), "conba-scan" (S6 selective SSM with the
ConbaLayer control/feedback gate), "linear" (pooling + Linear), "none" (pooling only).
"""

from conba.heads.base import Head
from conba.heads.baselines import LinearHead, PoolingHead
from conba.heads.config import HEAD_KINDS, HeadConfig
from conba.heads.factory import build_head, load_head, save_head
from conba.heads.seed_layer import ConbaLayer
from conba.heads.selective_scan import ConbaScan, selective_scan, selective_scan_reference

__all__ = [
    "HEAD_KINDS",
    "ConbaLayer",
    "ConbaScan",
    "Head",
    "HeadConfig",
    "LinearHead",
    "PoolingHead",
    "build_head",
    "load_head",
    "save_head",
    "selective_scan",
    "selective_scan_reference",
]
