"""``conba calibrate``: pick a model's clone threshold for a target precision on dev records, and
store it in the model folder's ``conba_config.json`` as ``clone_threshold`` (read by ``conba clones
-t auto`` and ``conba compare``; see :mod:`conba.clones.threshold`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conba.data import CodeRecord
from conba.errors import ConfigError
from conba.eval.precision import cross_language_pairs, threshold_for_precision
from conba.utils.io import read_json, write_json_atomic


def calibrate(records: list[CodeRecord], model: Any, target: float, sources: Sequence[str] = (),
              batch_size: int | None = None, progress: bool | None = None, lexical_weight: float | None = None) -> dict:
    """Encode ``records``, score all their cross-language pairs and return the ``clone_threshold``
    record: ``{"value", "precision", "recall", "target_precision", "pairs", "clone_pairs", "calibrated_on",
    "lexical_weight"}``. Scores are fused at ``lexical_weight`` (default: the model's), the lexical
    document frequencies counted over ``records``, as an index of them would."""
    from conba.lexical.fusion import check_weight

    weight = check_weight(getattr(model, "lexical_weight", 0.0) if lexical_weight is None else lexical_weight)
    if not records:
        raise ConfigError("no dev records")
    groups = [r.group for r in records]
    languages = [r.language for r in records]
    emb = model.encode([r.code for r in records], languages=languages, batch_size=batch_size,
                       show_progress_bar=progress)
    lexical = None
    if weight:
        from conba.lexical import LexicalVectorizer

        lexical = LexicalVectorizer().vectors([r.code for r in records])
    scores, labels = cross_language_pairs(emb, groups, languages, lexical=lexical, lexical_weight=weight)
    if not labels.any():
        raise ConfigError("no cross-language clone pairs: no group has records in two languages")
    if labels.all():
        raise ConfigError("no cross-language non-clone pairs: every pair is a clone (one group); a precision "
                          "needs two or more groups")
    found = threshold_for_precision(scores, labels, target)
    return {"value": round(found.threshold, 6), "precision": round(found.precision, 4),
            "recall": round(found.recall, 4), "target_precision": float(target), "pairs": int(labels.size),
            "clone_pairs": int(labels.sum()), "calibrated_on": [Path(s).name for s in sources],
            **({"lexical_weight": weight} if weight else {})}


def model_folder(name: str, force: bool = False) -> Path:
    """The folder of a saved conba model given by name or path (``default`` is the shipped one) that
    :func:`write_clone_threshold` may change."""
    from conba.model import CONFIG_NAME, DEFAULT_FAST_DIR, DEFAULT_MODEL_DIR

    folder = {"default": DEFAULT_MODEL_DIR, "default-sdtp": DEFAULT_MODEL_DIR,
              "default-fast": DEFAULT_FAST_DIR}.get(name, Path(name))
    if not (folder / CONFIG_NAME).is_file():
        raise ConfigError(f"{name}: not a conba model folder (no {CONFIG_NAME}); --write needs one")
    _refuse_shipped(folder, force)
    return folder


def is_shipped(folder: Path) -> bool:
    """Whether ``folder`` lies inside the installed conba package (the shipped default model)."""
    import conba

    return Path(folder).resolve().is_relative_to(Path(conba.__file__).resolve().parent)


def _refuse_shipped(folder: Path, force: bool) -> None:
    if is_shipped(folder) and not force:
        raise ConfigError(f"{folder}: this is the model shipped inside the conba package; save a copy "
                         "(ConbaModel.save) and calibrate that, or pass --force")


def write_clone_threshold(folder: Path, record: dict, force: bool = False,
                          lexical_weight: float | None = None) -> Path:
    """Store ``record`` as ``clone_threshold`` in ``folder``'s config, atomically, and ``lexical_weight``
    (when given) as the model's lexical weight. The shipped model is refused unless ``force`` (a package
    upgrade would silently undo the change)."""
    from conba.model import CONFIG_NAME

    _refuse_shipped(folder, force)
    path = Path(folder) / CONFIG_NAME
    config = read_json(path)
    if not isinstance(config, dict) or config.get("format") != "conba-model":
        raise ConfigError(f"{path}: not a conba model config")
    config["clone_threshold"] = record
    if lexical_weight is not None:
        config.pop("lexical_weight", None)
        if lexical_weight:
            config["lexical_weight"] = float(lexical_weight)
    write_json_atomic(path, config)
    return path
