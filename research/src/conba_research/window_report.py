"""fragments.json and fragments.md (output names kept from the earlier word for windows): the window fight's table
(mean ± std over seeds) and its setting."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from conba_research.report import md_table, write_outputs
from conba_research.window_cache import window_fingerprint
from conba_research.window_fight import Row, TrainSettings, WindowSet, summary


def _cell(stat: tuple[float, float], seeds: int) -> str:
    if np.isnan(stat[0]):
        return "–"  # no query of that kind (a dev set without long snippets)
    return f"{stat[0]:.3f}" if seeds == 1 else f"{stat[0]:.3f} ± {stat[1]:.3f}"


def write_report(out_dir: str | Path, done: dict, rows: Sequence[Row], train: WindowSet, dev: list[WindowSet],
                 ts: TrainSettings, model, command: str, files: dict | None = None) -> dict:
    table = summary(done, rows)
    data = {"experiment": "fragments", "command": command, "model_fingerprint": window_fingerprint(model),
            "fragments": int(train.vectors.shape[1]), "train": {"snippets": len(train.records),
                                                                "long": int(train.long.sum()),
                                                                "groups": len({r.group for r in train.records})},
            "dev": {fs.name: {"snippets": len(fs.records), "long": int(fs.long.sum())} for fs in dev},
            "settings": vars(ts), "rows": table, "runs": done, "files": files or {}}
    sets = [fs.name for fs in dev]
    headers = ["row", "seeds", "steps", "train s"]
    for s in sets:
        headers += [f"{s} all", f"{s} long"]
    body = []
    for e in table:
        cells = [e["row"], str(e["seeds"]), str(e["steps"]), f"{e['train_s']:.0f}"]
        for s in sets:
            cells += [_cell(e["scores"][f"{s}|map_at_r"], e["seeds"]), _cell(e["scores"][f"{s}|long_map_at_r"],
                                                                              e["seeds"])]
        body.append(cells)
    lines = ["# Window heads: the fair fight over the windows of long snippets", "",
             f"Command: `{command}`", "",
             f"Frozen model `{model.embedding_fingerprint()}` (its input view), up to {data['fragments']} windows "
             f"of 512 tokens per snippet. Training: {data['train']['snippets']} snippets of "
             f"{data['train']['groups']} groups ({data['train']['long']} longer than one window), "
             f"{ts.steps} steps of in-batch supcon (P {ts.groups_per_batch} × K {ts.per_group}, lr {ts.lr:g}, "
             f"τ {ts.temperature:g}) per seed. Dev: " + ", ".join(
                 f"{fs.name} {len(fs.records)} snippets ({int(fs.long.sum())} long)" for fs in dev) + ".",
             "", "Mean cross-language MAP@R (dense, no lexical channel), mean ± std over seeds; \"long\": the "
             "queries longer than one window, against all candidates. Every head returns a one-window "
             "snippet unchanged.", "", md_table(headers, body), ""]
    lines += [f"- `{r.name}`: {r.label}" for r in rows if any(e["row"] == r.name for e in table)]
    for name, res in (files or {}).items():
        lines += ["", f"## File level: {name} ({res['grouped']} grouped files of {res['files']}, "
                      f"{res['units']} functions)", "",
                  "A file's functions in source order are its windows; the trained heads are the ones above "
                  "(trained on windows of snippets, never on files). Mean cross-language file MAP@R (dense), "
                  "mean ± std over seeds.", "",
                  md_table(["file vector", "seeds", "MAP@R"],
                           [[k, str(len(v)), _cell((float(np.mean(v)), float(np.std(v))), len(v))]
                            for k, v in res["rows"].items()])]
    write_outputs(out_dir, "fragments", data, "\n".join(lines))
    return data
