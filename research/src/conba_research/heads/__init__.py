"""The research heads: the ConbaLayer kinds the research suite plugs into conba (entry-point group
``conba.heads``, research/pyproject.toml; ``conba.utils.head_kinds``).

Glossary (dimension letters, as in mamba-minimal):
    b: batch size
    l: sequence length (padding included)
    d: model width (backbone hidden size, ``HeadConfig.dim``)
    n: SSM state size (``HeadConfig.state_dim``)
    c: control-code width (``HeadConfig.code_dim``)

Kinds: "conba" (the seed ConbaLayer, pooled or over tokens; ``seed_layer``), "conba-scan" (the S6
selective SSM with the ConbaLayer control/feedback gate; ``selective_scan``). Their shared gate and
output map: ``gate``; the offset language control codes added to control_weight: ``control_codes``; the
linear recurrences over tokens without a Python loop: ``scan``. A saved model of these kinds loads
through ``conba.load_model`` once this suite is installed (``pip install -e research/``).
"""

from conba_research.heads.control_codes import ControlCodes, effective_control_weight
from conba_research.heads.gate import GATED_KINDS, GatedHead, uses_control_codes
from conba_research.heads.scan import doubling_scan, linear_scan, linear_scan_reference
from conba_research.heads.seed_layer import ConbaLayer
from conba_research.heads.selective_scan import ConbaScan, selective_scan, selective_scan_reference

__all__ = [
    "GATED_KINDS",
    "ConbaLayer",
    "ConbaScan",
    "ControlCodes",
    "GatedHead",
    "doubling_scan",
    "effective_control_weight",
    "linear_scan",
    "linear_scan_reference",
    "selective_scan",
    "selective_scan_reference",
    "uses_control_codes",
]
