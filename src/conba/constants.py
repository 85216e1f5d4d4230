"""The names and choices several layers share, defined once and torch-free.

The CLI, the training config and the index's lazy model check choices and find files without importing
torch; the modules that implement them (``conba.encoder.readout``, ``conba.heads.config``, ``conba.engine``,
``conba.engine.device``, ``conba.syntax.view``, ``conba.model.core``) import these same tuples, so a new
choice is added in one place (tests/project/test_architecture.py refuses a copy elsewhere).
"""

from __future__ import annotations

# read-outs of a backbone's token states (conba.encoder.readout; --pooling of a bare model)
POOLINGS: tuple[str, ...] = ("mean", "cls", "max", "lasttoken", "weightedmean", "mean_sqrt_len_tokens")
HEAD_KINDS: tuple[str, ...] = ("linear", "none")  # the product's heads; plug-ins add more (conba.utils.head_kinds)
HEAD_MODES: tuple[str, ...] = ("pooled", "tokens")  # a ConbaLayer head on a pooled vector or over the tokens
STATE_AS: tuple[str, ...] = ("diag", "dense")  # A of a ConbaLayer over tokens: parallel scan or a d x d loop
ENGINES: tuple[str, ...] = ("torch", "onnx", "onnx-fp32")  # inference engines (conba.engine)
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda", "mps")  # --device choices (cuda:N also taken)
DTYPES: tuple[str, ...] = ("auto", "float32", "float16", "bfloat16")  # inference precisions (conba.engine.device)
VIEWS: tuple[str, ...] = ("raw", "code", "code+docs")  # input views (conba.syntax.view)
MODEL_CONFIG_NAME = "conba_config.json"  # the file that makes a folder a conba model (conba.model.core)
SHIPPED_MODEL_DIRS = {"default": "default_model", "default-fast": "default_fast"}  # folders inside the package

# the environment variables read by more than one module (docs/CLI.md lists them all)
MODEL_ENV = "CONBA_MODEL"  # default model of every command
CACHE_ENV = "CONBA_CACHE"  # feature and embedding cache
THREADS_ENV = "CONBA_THREADS"  # CPU threads of torch and ONNX Runtime
TOKEN_ENV = "CONBA_TOKEN"  # bearer token of conba serve / conba.Client
DEVICE_ENV = "CONBA_DEVICE"  # --device of every command that runs a model
DTYPE_ENV = "CONBA_DTYPE"  # --dtype of inference
