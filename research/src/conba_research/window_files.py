"""File level: a file as the sequence of its functions' vectors, read by a window head (evaluation only).

Glossary: u function units, F files, f functions of one file (its windows), d model width.

An index built with the frozen model holds one vector per function; each file's functions, in
source order, are its windows. A window head turns them into one file vector, and files are
ranked by the cosine of their vectors, scored as ``conba eval-repo`` scores files (MAP@R per ordered
language pair of the grouped files, mean over pairs). The reference rows are eval-repo's own
aggregations of function-pair similarities: the best pair (``max``) and ``mean-best``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from conba.heads.window_head import WindowHead, WindowHeadConfig, build_window_head, load_window_head


def file_vectors(table, head: WindowHead) -> np.ndarray:
    """One vector per file of ``table`` (a UnitTable): the head over its units' vectors. Returns (F, d)."""
    out = np.zeros((len(table.files), table.vectors.shape[1]), np.float32)
    head.eval()
    with torch.no_grad():
        for k in range(len(table.files)):
            x = torch.from_numpy(np.asarray(table.vectors[table.starts[k]:table.starts[k + 1]], np.float32))
            out[k] = head(x[None], None)[0].numpy()
    return out


def file_table(table, vectors: np.ndarray):
    """The same files with one unit each: their file vector (normalised)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return dataclasses.replace(table, starts=np.arange(len(table.files) + 1, dtype=np.int64), vectors=unit,
                               codes=[""] * len(table.files), lexical=None, lexical_weight=0.0, units=[])


def score_files(index_dir: str | Path, groups_file: str | Path, heads_dir: str | Path | None = None,
                name: str = "repo") -> dict:
    """File-level MAP@R of the reference aggregations and of every window head: the parameter-free
    ones, and the trained ones saved under ``heads_dir`` (``<row>-s<seed>/``), mean over seeds."""
    from conba.eval.repo_scores import repo_retrieval
    from conba_research.fair import load_repo_set

    repo = load_repo_set(index_dir, groups_file, "raw", name)
    table = dataclasses.replace(repo.table, lexical=None, lexical_weight=0.0)
    out: dict = {"files": len(table.files), "grouped": len(repo.group_of), "units": table.n_units, "rows": {}}
    for agg in ("max", "mean-best"):
        out["rows"][f"function pairs ({agg})"] = [repo_retrieval(table, repo.group_of, agg)["mean"]["map_at_r"]]
    dim = table.vectors.shape[1]
    heads: dict[str, list[WindowHead]] = {r: [build_window_head(WindowHeadConfig(reader=r, dim=dim))]
                                          for r in ("mean", "max", "first")}
    if heads_dir is not None:
        for folder in sorted(Path(heads_dir).glob("*-s*")):
            heads.setdefault(folder.name.rsplit("-s", 1)[0], []).append(load_window_head(folder))
    for row, hs in heads.items():
        out["rows"][row] = [repo_retrieval(file_table(table, file_vectors(table, h)), repo.group_of,
                                           "max")["mean"]["map_at_r"] for h in hs]
    return out
