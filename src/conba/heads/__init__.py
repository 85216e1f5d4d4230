"""Heads: token states of a code encoder -> one embedding per snippet.

Glossary (dimension letters, as in mamba-minimal):
    b: batch size
    l: sequence length (padding included)
    d: model width (backbone hidden size, ``HeadConfig.dim``)

Kinds: "linear" (pooling + Linear, the default) and "none" (pooling only) are the product's; an installed
distribution adds more through the ``conba.heads`` entry points (``conba.utils.head_kinds``): the research
suite's ConbaLayer heads "conba" and "conba-scan" (``conba_research.heads``, ``pip install -e research/``).
Language control codes: a prefix code inserted after CLS at the backbone's embedding layer (any kind;
``conba.heads.prefix``); the ConbaLayer heads also take them as an offset to their control weight.
"""

from conba.heads.base import Head
from conba.heads.baselines import LinearHead, PoolingHead
from conba.heads.config import HeadConfig, upgrade_legacy
from conba.heads.factory import build_head, head_class, load_head, save_head
from conba.heads.prefix import PrefixCodes, prefixed_states, require_no_prefix, run_prefixed
from conba.utils.head_kinds import HEAD_KINDS, head_kinds

__all__ = [
    "HEAD_KINDS",
    "Head",
    "HeadConfig",
    "LinearHead",
    "PoolingHead",
    "PrefixCodes",
    "build_head",
    "head_class",
    "head_kinds",
    "load_head",
    "prefixed_states",
    "require_no_prefix",
    "run_prefixed",
    "save_head",
    "upgrade_legacy",
]
