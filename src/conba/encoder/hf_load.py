"""Loading a Hugging Face model folder safely: no custom code without the opt-in, no pickles, one-line errors.

:func:`load_pretrained` is what :func:`conba.encoder.backbone.load_hf` runs. Every transformers call
gets ``trust_remote_code`` explicitly: left unset, transformers *asks on stdin* whether to run a
folder's custom code (``auto_map`` + a ``.py``), so ``echo y | conba encode ...`` or a user at a
terminal would run it; ``--trust-remote-code`` is the only way in. Weights load from safetensors only
(``use_safetensors=True``): a folder with only a pickle (``pytorch_model.bin``) is refused before
anything reads it. A malformed folder (a wrong type or invalid JSON in ``config.json``, weights whose
shapes do not match it, no tokenizer files, a tokenizer bigger than the embedding table) is a
one-line :class:`BackboneError` naming the file, never a traceback or silently wrong vectors.
"""

from __future__ import annotations

import logging
from pathlib import Path

from conba.errors import ConbaError

PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack",
                  "model.ckpt.index")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model",
                   "tokenizer.model")


class BackboneError(ConbaError, RuntimeError):
    """The backbone could not be loaded or does not support an operation."""


class RemoteCodeRefused(Exception):
    """A load transformers refused because it needs custom code (no opt-in)."""


def check_folder(path: Path) -> None:
    """Refuse, before transformers reads anything, a local folder whose weights are only a pickle."""
    if not path.is_dir() or any(path.glob("*.safetensors")) or any(path.glob("*.safetensors.index.json")):
        return
    pickled = [name for name in PICKLE_WEIGHTS if (path / name).exists()] + sorted(p.name for p in path.glob("*.pt"))
    if pickled:
        raise BackboneError(f"{path / pickled[0]}: pickled weights are never loaded (unpickling can run code); "
                            "convert them to model.safetensors (safetensors.torch.save_file) and load the folder again")
    if (path / "config.json").is_file():
        raise BackboneError(f"{path}: no model.safetensors (the weights) beside config.json")


def _config_error(path: str, local: bool, exc: BaseException) -> BackboneError:
    where = f"{Path(path) / 'config.json'}" if local else path
    detail = " ".join(str(exc).split())  # one line: transformers' messages span several
    return BackboneError(f"{where}: invalid model config ({detail[:300]})")


def load_config(path: str, local: bool, trust_remote_code: bool, offline: bool):
    """``AutoConfig`` of ``path`` (a hub name or a folder), malformed configs as one-line errors."""
    from huggingface_hub.errors import StrictDataclassFieldValidationError
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(path, local_files_only=offline, trust_remote_code=trust_remote_code)
    except (ValueError, OSError) as exc:
        if "trust_remote_code" in str(exc):
            raise RemoteCodeRefused from None
        if not local or isinstance(exc, OSError) and "config.json" not in str(exc):
            raise
        raise _config_error(path, local, exc) from None
    except (StrictDataclassFieldValidationError, TypeError, KeyError, AttributeError) as exc:
        raise _config_error(path, local, exc) from None


def load_weights(loader, path: str, config, local: bool, trust_remote_code: bool, offline: bool):
    """``loader.from_pretrained`` from safetensors only; weights that do not fit ``config.json`` (a
    vocabulary or width that differs) are a one-line error naming the folder's files."""
    held = _HeldRecords()
    report = logging.getLogger("transformers.modeling_utils")  # where transformers logs its load report
    report.addFilter(held)
    mismatch = False
    try:
        return loader.from_pretrained(path, config=config, local_files_only=offline,
                                      trust_remote_code=trust_remote_code, use_safetensors=True)
    except RuntimeError as exc:
        mismatch = "mismatch" in str(exc)
        if not mismatch:
            raise
        where = Path(path) if local else path
        raise BackboneError(f"{where}: the weights (model.safetensors) do not match config.json: tensor shapes "
                            "differ (e.g. vocab_size or hidden_size); the files come from different models") from None
    finally:
        report.removeFilter(held)
        if not mismatch:  # the report of a load that worked (e.g. an unused pooler) is shown as before
            for record in held.records:
                report.handle(record)


class _HeldRecords(logging.Filter):
    """Holds a logger's records back (the multi-line table transformers prints before a shape error)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False


def check_tokenizer(tokenizer, model, path: str) -> None:
    """A tokenizer with no vocabulary beyond its special tokens (no tokenizer files in the folder:
    transformers then builds one that maps every token to [UNK], and unrelated code scores as a clone),
    or whose vocabulary has ids past the embedding table, is an error naming the folder."""
    vocab = tokenizer.get_vocab()
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    if len(set(vocab.values()) - special) == 0:
        raise BackboneError(f"{path}: no tokenizer files ({', '.join(TOKENIZER_FILES[:3])}, ...); without them "
                            "every token would read as [UNK]: copy the tokenizer the model was trained with into "
                            "the folder")
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    rows = getattr(embeddings, "num_embeddings", None)
    base = getattr(tokenizer, "vocab_size", None)  # the base vocabulary (added tokens aside)
    if isinstance(rows, int) and isinstance(base, int) and base > rows:
        raise BackboneError(f"{path}: the tokenizer has {base} tokens but the model's embedding table "
                            f"(vocab_size in config.json) has {rows}: the tokenizer files belong to another model")


def load_pretrained(path: str, local: bool, trust_remote_code: bool, offline: bool, loader_name):
    """(tokenizer, model) of ``path``; ``loader_name(config)``: the transformers class to load it with.
    Raises :class:`RemoteCodeRefused` when the folder needs custom code and ``trust_remote_code`` is off."""
    import transformers
    from transformers import AutoTokenizer

    trust = bool(trust_remote_code)
    if local:
        check_folder(Path(path))
    config = load_config(path, local, trust, offline)
    loader = getattr(transformers, loader_name(config))
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=offline, trust_remote_code=trust)
    except ValueError as exc:
        if "trust_remote_code" in str(exc):
            raise RemoteCodeRefused from None
        raise
    try:
        model = load_weights(loader, path, config, local, trust, offline)
    except ValueError as exc:
        if "trust_remote_code" in str(exc):
            raise RemoteCodeRefused from None
        raise
    check_tokenizer(tokenizer, model, path)
    return tokenizer, model
