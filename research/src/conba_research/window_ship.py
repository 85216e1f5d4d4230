"""Ship a trained window head as a model folder's long-input read-out.

``python -m conba_research.window_ship HEAD_DIR MODEL_DIR --max-windows 8 --note TEXT`` puts the head
saved by ``conba experiment windows`` (``OUT/heads/<row>-s<seed>/``) into ``MODEL_DIR/fragment_head/``
and sets ``max_chunks`` (the file-format names of max_windows and of the window head's folder), the weights
``fingerprint`` and ``info.fragment_head`` (the provenance key the shipped default already has) in its
``conba_config.json``, leaving every other file and key as it is (the backbone delta, the head, the
order of the keys). A folder saved in float16 gets the head rounded to float16 values (kept float32, as
``ConbaModel.save`` does), so the folder loads back with the fingerprint it states. The folder is loaded
again at the end and its fingerprint checked.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import torch

from conba.heads.window_head import load_window_head, save_window_head
from conba.model.core import CONFIG_NAME, ConbaModel
from conba.model.persist import round_to
from conba.utils.io import read_json, replace_dir, write_json_atomic


def ship(head_dir: Path, model_dir: Path, max_windows: int, provenance: dict) -> str:
    """Attach ``head_dir``'s window head to the model folder ``model_dir``; returns its new fingerprint."""
    model = ConbaModel.load(model_dir)
    head = load_window_head(head_dir).float().eval()
    if head.config.dim != model.dim:
        raise SystemExit(f"{head_dir}: the head is {head.config.dim} wide, the model {model.dim}")
    cfg_path = model_dir / CONFIG_NAME
    cfg = read_json(cfg_path)
    if cfg.get("dtype") == "float16":
        round_to(torch.float16, list(head.parameters()))
    model.window_head, model.max_windows = head, max_windows
    fingerprint = model.fingerprint()
    tmp = Path(tempfile.mkdtemp(dir=model_dir, prefix=".window_head."))
    tmp.chmod(0o755)  # mkdtemp makes it private; a model folder is read by everyone
    try:
        save_window_head(head, tmp)
        replace_dir(tmp, model_dir / "fragment_head")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cfg["max_chunks"] = max_windows  # the file-format name of max_windows
    cfg["fingerprint"] = fingerprint
    cfg.setdefault("info", {})["fragment_head"] = provenance
    write_json_atomic(cfg_path, cfg)
    back = ConbaModel.load(model_dir)
    assert back.fingerprint() == fingerprint and back.max_windows == max_windows
    return fingerprint


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("head", type=Path, help="a saved window head folder (fragment_config.json + weights)")
    ap.add_argument("model", type=Path, help="the model folder to ship it in (e.g. src/conba/default_model)")
    ap.add_argument("--max-windows", "--max-chunks", dest="max_windows", type=int, default=8,
                    help="windows per long snippet at most (--max-chunks: its old name)")
    ap.add_argument("--note", action="append", default=[], help="KEY=VALUE provenance (repeatable)")
    args = ap.parse_args(argv)
    if args.max_windows < 2:
        raise SystemExit("--max-windows must be >= 2 (1 truncates: the head would never run)")
    provenance = {"source": str(args.head), "reader": load_window_head(args.head).config.reader}
    for note in args.note:
        key, sep, value = note.partition("=")
        if not sep:
            raise SystemExit(f"--note {note!r}: expected KEY=VALUE")
        provenance[key] = value
    print(f"{args.model}: fingerprint {ship(args.head, args.model, args.max_windows, provenance)}")


if __name__ == "__main__":
    main()
