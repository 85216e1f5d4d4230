"""What the GPU machine lacks, packed small here (``scripts/gpu_train.sh prepare``) and unpacked there.

Why so small: the project's working tree goes to the GPU machine too (about 37 MB of tracked files, the
shipped models' weights included) and everything together must stay under 64 MiB, so the untuned
MiniLM (88 MB in float32, 45 MB in float16, 41 MB of that as xz) cannot travel as a folder. The pack:

    base.tp           the untuned MiniLM in float16 (:mod:`tensor_pack`): its encoder layers stored against
                      the shipped default's tuned ones (src/conba/default_model, which travels anyway),
                      its word embeddings only for the tokens the data holds (about a third of the
                      vocabulary); the other rows are zero: no text of the run looks them up, they stay
                      frozen, and :mod:`export` restores them from the real MiniLM here (so does
                      the pooler, which conba never reads: zero in the pack)
    base-files.tar.xz config.json, tokenizer and sentence-transformers files of the MiniLM folder
    data.tar.xz       the training and dev sets (:data:`DATA_SETS`) as in ../shared/data
    pack.json         what is in it: sizes, the reference's checksum, the tokens kept

:func:`unpack` rebuilds a Hugging Face folder (float16 weights, loaded as float32: its config says so)
and the data folder. Tests run all of it on the tiny test backbone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tarfile
import time
from collections.abc import Iterable
from pathlib import Path

import torch

from conba.errors import UsageError
from conba.utils.io import write_json_atomic
from conba.utils.saved import read_tensors, write_tensors
from conba_research.gpu_train import tensor_pack

DATA_SETS = ("atcoder_train.jsonl", "mbxp_train.jsonl", "atcoder_dev.jsonl", "mbxp_dev.jsonl",
             "algorithms_dev", "ports_dev")
WEIGHTS = "model.safetensors"
EMBEDDINGS = "embeddings.word_embeddings.weight"
UNREAD_PREFIXES = ("pooler.",)  # BERT's pooler: conba reads the token states, never the pooled output
SKIPPED_FILES = {"README.md", "data_config.json", ".gitattributes"}  # not read by transformers or conba
CODE_SUFFIXES = {".py", ".java", ".c", ".h", ".cpp", ".hpp", ".cc", ".cs", ".js", ".ts", ".go", ".rs", ".kt",
                 ".php", ".rb"}


def shipped_reference() -> Path:
    """The shipped default's tuned backbone tensors (the reference the untuned layers are stored against)."""
    from conba.model.core import DEFAULT_MODEL_DIR

    return Path(DEFAULT_MODEL_DIR) / "backbone_delta.safetensors"


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def data_texts(data: Path, view: str, log=print) -> list[str]:
    """Every text the run tokenizes: the JSONL snippets in ``view`` (training and evaluation both encode
    them viewed; a snippet the view cannot parse stays raw, as there) and the repositories' code files
    whole (a superset of the functions the index extracts and views)."""
    from conba.data import load_many
    from conba.syntax.view import apply_views

    records = load_many([data / n for n in DATA_SETS if n.endswith(".jsonl")])
    texts = [r.code for r in records]
    if view != "raw":
        t0 = time.time()
        texts = apply_views(texts, [r.language for r in records], view)[0]
        log(f"view {view} of {len(records)} snippets: {time.time() - t0:.0f}s")
    for name in DATA_SETS:
        if not name.endswith(".jsonl"):
            texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted((data / name).rglob("*"))
                      if p.suffix in CODE_SUFFIXES and p.is_file()]
    return texts


def used_token_ids(tokenizer, texts: Iterable[str], batch: int = 2000) -> set[int]:
    """The token ids the tokenizer gives ``texts`` (special tokens included)."""
    texts = list(texts)
    ids = set(tokenizer.all_special_ids)
    for start in range(0, len(texts), batch):
        for row in tokenizer(texts[start:start + batch], add_special_tokens=True)["input_ids"]:
            ids.update(row)
    return ids


def half_state(model_dir: Path) -> dict[str, torch.Tensor]:
    """The folder's weights with every floating tensor rounded to float16 (others as they are)."""
    state = read_tensors(model_dir / WEIGHTS)
    return {k: v.half() if v.is_floating_point() else v for k, v in state.items()}


def pack_base(model_dir: Path, out: Path, keep_ids: set[int] | None, reference: Path | None) -> dict:
    """Write ``base.tp`` and ``base-files.tar.xz`` for the Hugging Face folder ``model_dir``."""
    state = half_state(model_dir)
    for name in [k for k in state if k.startswith(UNREAD_PREFIXES)]:
        state[name] = torch.zeros_like(state[name])  # never read by the run: zeros pack to nothing
    if keep_ids is not None and EMBEDDINGS in state:
        emb = state[EMBEDDINGS]
        mask = torch.zeros(emb.shape[0], dtype=torch.bool)
        mask[sorted(i for i in keep_ids if i < emb.shape[0])] = True
        state[EMBEDDINGS] = torch.where(mask[:, None], emb, torch.zeros_like(emb))
    ref = {k: v.half() for k, v in read_tensors(reference).items()} if reference else None
    size = tensor_pack.write(out / "base.tp", state, ref, preset=9)
    with tarfile.open(out / "base-files.tar.xz", "w:xz", preset=9) as tar:
        for path in sorted(model_dir.rglob("*")):
            if path.is_file() and path.name not in SKIPPED_FILES and path.suffix not in (".safetensors", ".bin"):
                tar.add(path, arcname=str(path.relative_to(model_dir)))
    return {"base_bytes": size, "reference": str(reference.name) if reference else None,
            "reference_sha256": file_sha(reference) if reference else None,
            "tokens_kept": len(keep_ids) if keep_ids is not None else None,
            "vocabulary": int(state[EMBEDDINGS].shape[0]) if EMBEDDINGS in state else None}


def pack_data(data: Path, out: Path) -> int:
    missing = [n for n in DATA_SETS if not (data / n).exists()]
    if missing:
        raise UsageError(f"{data}: missing {', '.join(missing)} (the folder of ../shared/data)")
    with tarfile.open(out / "data.tar.xz", "w:xz", preset=9) as tar:
        for name in DATA_SETS:
            tar.add(data / name, arcname=name)
    return (out / "data.tar.xz").stat().st_size


def prepare(data: Path, out: Path, model_dir: Path, reference: Path | None, view: str = "code+docs",
            log=print) -> dict:
    """Fill ``out`` (see the module docstring); returns what pack.json records."""
    from transformers import AutoTokenizer

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    keep = used_token_ids(tokenizer, data_texts(data, view, log))
    log(f"{len(keep)} of {len(tokenizer)} tokens occur in the data ({time.time() - t0:.0f}s)")
    info = {"format": "conba-gpu-train-pack", "view": view, **pack_base(model_dir, out, keep, reference)}
    log(f"base.tp: {info['base_bytes'] / 1e6:.1f} MB ({time.time() - t0:.0f}s)")
    info["data_bytes"] = pack_data(data, out)
    log(f"data.tar.xz: {info['data_bytes'] / 1e6:.1f} MB ({time.time() - t0:.0f}s)")
    write_json_atomic(out / "pack.json", info)
    return info


def _safe_extract(archive: Path, dest: Path) -> None:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")  # no absolute paths, links out or devices


def unpack(pack: Path, work: Path, reference: Path | None) -> tuple[Path, Path]:
    """The Hugging Face folder of the packed base and the data folder, under ``work`` (reused when
    already there)."""
    info = json.loads((pack / "pack.json").read_text())
    base, data = work / "base", work / "data"
    if not (base / WEIGHTS).is_file():
        if info.get("reference_sha256") and (reference is None or file_sha(reference) != info["reference_sha256"]):
            raise UsageError(f"{pack}: packed against {info['reference']} with checksum {info['reference_sha256']}, "
                             "which this tree does not have: run `scripts/gpu_train.sh prepare` again here")
        ref = {k: v.half() for k, v in read_tensors(reference).items()} if info.get("reference_sha256") else None
        tmp = work / "base.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _safe_extract(pack / "base-files.tar.xz", tmp)
        write_tensors(tmp / WEIGHTS, tensor_pack.read(pack / "base.tp", ref))
        config = json.loads((tmp / "config.json").read_text())
        config["dtype"] = config["torch_dtype"] = "float32"  # float16 weights, trained and evaluated in float32
        (tmp / "config.json").write_text(json.dumps(config, indent=2))
        shutil.rmtree(base, ignore_errors=True)
        tmp.rename(base)
    if not (data / "ports_dev").is_dir():
        tmp = work / "data.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        _safe_extract(pack / "data.tar.xz", tmp)
        shutil.rmtree(data, ignore_errors=True)
        tmp.rename(data)
    return base, data


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="The data folder.")
    ap.add_argument("-o", "--out", type=Path, default=Path(".gpu-train"), help="The pack folder.")
    ap.add_argument("--base", type=Path, default=None,
                    help="Hugging Face folder of the untuned backbone (default: the embedded MiniLM).")
    ap.add_argument("--reference", type=Path, default=None,
                    help="safetensors whose same-name tensors the base is stored against (default: the shipped "
                         "default's backbone delta; 'none': no reference).")
    args = ap.parse_args(argv)
    from conba.encoder.backbone import embedded_model_path

    base = args.base or embedded_model_path()
    reference = None if str(args.reference) == "none" else (args.reference or shipped_reference())
    try:
        prepare(args.data, args.out, base, reference, log=lambda m: print(m, file=sys.stderr, flush=True))
    except UsageError as exc:
        raise SystemExit(f"error: {exc}") from None

