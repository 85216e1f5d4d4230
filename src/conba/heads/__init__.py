"""Heads: token states of a code encoder -> one embedding per snippet.

Glossary (dimension letters, as in mamba-minimal):
    b: batch size
    l: sequence length (padding included)
    d: model width (backbone hidden size, ``HeadConfig.dim``)
    n: SSM state size (``HeadConfig.state_dim``)
    c: control-code width (``HeadConfig.code_dim``)

Kinds: "conba" (seed ConbaLayer, pooled or over tokens), "conba-scan" (S6 selective SSM with the
ConbaLayer control/feedback gate), "linear" (pooling + Linear), "none" (pooling only). Language
control codes: an offset to control_weight (ConbaLayer kinds) and/or a prefix code inserted after CLS at
the backbone's embedding layer (any kind; ``conba.heads.prefix``).
"""

from conba.heads.base import Head
from conba.heads.baselines import LinearHead, PoolingHead
from conba.heads.config import HEAD_KINDS, HeadConfig, upgrade_legacy
from conba.heads.factory import build_head, load_head, save_head
from conba.heads.prefix import PrefixCodes, prefixed_states, require_no_prefix, run_prefixed
from conba.heads.scan import linear_scan, linear_scan_reference
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
    "PrefixCodes",
    "build_head",
    "linear_scan",
    "linear_scan_reference",
    "load_head",
    "prefixed_states",
    "require_no_prefix",
    "run_prefixed",
    "save_head",
    "selective_scan",
    "selective_scan_reference",
    "upgrade_legacy",
]
