"""Errors of the code index. All are RuntimeErrors whose message is one line naming the culprit."""

from __future__ import annotations

from conba.errors import CodeIndexError, SourceError

__all__ = ["CodeIndexError", "SourceError", "ModelMismatchError", "EngineMismatchError", "CorruptIndexError",
           "IncompleteIndexError", "IndexBusyError", "ModelUpgradeError", "NoSourceFilesError"]


class ModelMismatchError(CodeIndexError):
    """The index was built with a different model than the one in use."""


class EngineMismatchError(ModelMismatchError):
    """The index was built with another inference engine (torch, onnx, onnx-fp32): its vectors differ."""


class ModelUpgradeError(ModelMismatchError):
    """The model gained a long-input read-out since the index was built: the index's vectors are the model's
    for every function that fits one window, and `conba index` re-encodes only the longer ones
    (:mod:`conba.index.model.upgrade`). ``model``: the model that was checked."""

    model: object = None


class CorruptIndexError(CodeIndexError):
    """An index file is corrupted, truncated or inconsistent."""


class IncompleteIndexError(CodeIndexError):
    """Indexing was interrupted before the vector file was written."""


class IndexBusyError(CodeIndexError):
    """Another process is writing the index (it holds the folder's lock)."""


class NoSourceFilesError(SourceError):
    """The paths given to index hold no source file (a sharded index leaves such a shard empty)."""
