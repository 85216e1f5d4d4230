"""The fair fight: every head on the same frozen backbone, data, view and seeds, at equal budgets.

Each row is trained twice per seed: with the same number of optimiser steps (``steps`` budget) and
with the same wall-clock seconds of training (``seconds`` budget; the per-epoch dev check counts, as
it does for any user). Every head starts as the identity (step 0 is the backbone's pooled vector),
reads the same cached token states of the same backbone (``backbone_from``: e.g. the shipped
default's weights; frozen, ``--tune none``) through the same input view, and is scored on every dev
subset (MAP@R, F1, AUC) and, when a repository index and its groups file are given, on real code:
file-level cross-language MAP@R, computed as ``conba eval-repo`` does, over the index's units.

Over-tokens heads (ConbaLayer over tokens, conba-scan) read the first ``head_tokens`` token states;
pooled heads read the mean of all of them. Rows with prefix control codes run the whole backbone at
every step and every evaluation (the code enters at the embedding layer), so on a CPU they are
optional (``prefix_seeds``) and reported with the seeds they got.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conba.errors import ConfigError
from conba.utils.cache import cache_key
from conba.utils.io import read_json, write_json_atomic
from conba_research.data import write_subset
from conba_research.metrics import aggregate, mean_std, score_embeddings
from conba_research.report import fmt, md_table, write_outputs
from conba_research.runner import ExperimentTrainer, Runner, Variant, select_named

ROWS: tuple[Variant, ...] = (
    Variant("linear", "linear head (identity start)", head="linear"),
    Variant("linear+prefix", "linear head + prefix codes", head="linear", control_codes="prefix"),
    Variant("pooled", "ConbaLayer, pooled"),
    Variant("pooled+offset", "ConbaLayer, pooled + offset codes", control_codes="offset"),
    Variant("pooled+prefix", "ConbaLayer, pooled + prefix codes", control_codes="prefix"),
    Variant("tokens", "ConbaLayer over tokens (diagonal-A scan)", head_mode="tokens"),
    Variant("tokens+offset", "ConbaLayer over tokens + offset codes", head_mode="tokens", control_codes="offset"),
    Variant("tokens+prefix", "ConbaLayer over tokens + prefix codes", head_mode="tokens", control_codes="prefix"),
    Variant("scan", "conba-scan (S6, Mamba Δ init)", head="conba-scan"),
    Variant("scan+offset", "conba-scan + offset codes", head="conba-scan", control_codes="offset"),
    Variant("scan+prefix", "conba-scan + prefix codes", head="conba-scan", control_codes="prefix"),
    Variant("no_control", "ConbaLayer, pooled, without control_weight", use_control=False),
    Variant("no_feedback", "ConbaLayer, pooled, without feedback_weight (state added unweighted)",
            use_feedback=False),
    Variant("no_state", "ConbaLayer, pooled, without the state (B; the feedback term is 0)",
            use_state=False),
)
BUDGETS = ("seconds", "steps")  # seconds first: it should run on an otherwise idle machine


def is_prefix(v: Variant) -> bool:
    return v.control_codes in ("prefix", "both")


def select_rows(names: Sequence[str] | None) -> list[Variant]:
    return select_named(ROWS, names, "row")


@dataclasses.dataclass
class RepoSet:
    """Function units of an indexed repository in :class:`UnitTable` order, with the grouped files."""

    name: str
    table: Any                 # conba.eval.repo_units.UnitTable (its vectors are replaced per model)
    records: list              # (u,) CodeRecord per unit: code (viewed) and language
    group_of: dict[str, str]   # index path -> group, for the grouped files found


def load_repo_set(index_dir: str | Path, groups_file: str | Path, view: str, name: str = "algorithms_dev") -> RepoSet:
    from conba.data.records import CodeRecord
    from conba.eval.repo_groups import load_groups, resolve_groups
    from conba.eval.repo_units import table_from_index
    from conba.index import Index
    from conba.syntax.view import apply_views

    groups = load_groups(groups_file)
    with Index(index_dir, create=False) as idx:
        table = table_from_index(idx)
        units_of = {f: int(table.starts[k + 1] - table.starts[k]) for k, f in enumerate(table.files)}
        found, _missing = resolve_groups(groups, units_of, set(idx.store.file_states()), Path(groups_file).parent)
    if not found:
        raise ConfigError(f"{groups_file}: none of the grouped files is in the index {index_dir}")
    langs = [table.languages[k] for k in range(len(table.files))
             for _ in range(int(table.starts[k + 1] - table.starts[k]))]
    codes = table.codes
    if view != "raw":
        codes, _stats = apply_views(list(codes), langs, view)
    records = [CodeRecord(id=str(i), group="", language=lang, code=c) for i, (c, lang) in enumerate(zip(codes, langs))]
    return RepoSet(name, table, records, found)


def score_repo(emb: np.ndarray, repo: RepoSet) -> dict:
    from conba.eval.repo_scores import repo_retrieval

    table = dataclasses.replace(repo.table, vectors=np.asarray(emb, dtype=np.float32))
    res = repo_retrieval(table, repo.group_of, "max")
    return {"map_at_r": res["mean"]["map_at_r"], "recall_at_1": res["mean"]["recall_at_1"]}


def _viewed(records: list, view: str) -> list:
    if view == "raw":
        return list(records)
    from conba.syntax.view import apply_views

    codes, _stats = apply_views([r.code for r in records], [r.language for r in records], view)
    return [dataclasses.replace(r, code=c) for r, c in zip(records, codes)]


class FairRunner(Runner):
    """A Runner whose runs use the fair fight's budget, view and backbone weights."""

    def __init__(self, cfg, prepared, *, steps: int, seconds: float, epoch_steps: int, view: str = "raw",
                 backbone_from: str = "", repo: RepoSet | None = None, select_limit: int = 500,
                 progress: bool = True, log=print):
        super().__init__(cfg, prepared, progress=progress, log=log)
        self.steps, self.seconds, self.epoch_steps = steps, seconds, epoch_steps
        self.select_limit = select_limit  # dev records (whole groups) of the per-epoch early-stopping check
        self.view, self.backbone_from, self.repo = view, backbone_from, repo
        self.budget = "steps"
        self._backbone_state = None
        if backbone_from:
            from conba.model import load_model

            self._backbone_state = {k: v.clone() for k, v in load_model(backbone_from).backbone.state_dict().items()}
        # The view is applied once here (written as subsets next to the plain ones), not by every run.
        folder = Path(cfg.work) / "data"
        viewed_train = _viewed(prepared.train_records, view)
        self.train_path = write_subset(viewed_train, folder, f"train-{view}") if view != "raw" else prepared.train_path
        self.viewed_sets, self.dev_paths = [], []
        for s in prepared.eval_sets:
            recs = _viewed(s.records, view)
            self.viewed_sets.append((s.name, recs))
            self.dev_paths.append(write_subset(recs, folder, f"{s.name}-{view}") if view != "raw" else s.path)

    def train_config(self, v: Variant, seed: int, temperature: float | None = None):
        tc, extra = super().train_config(v, seed, temperature)
        epochs = max(1, self.steps // self.epoch_steps) if self.budget == "steps" else 10_000
        tc = dataclasses.replace(
            tc, train=[self.train_path], dev=self.dev_paths, dev_limit=self.select_limit, epochs=epochs,
            patience=epochs,
            groups_per_batch=self.cfg.groups_per_batch, time_budget=self.seconds if self.budget == "seconds" else 0.0)
        extra = {"head_tokens": self.cfg.head_tokens if v.token_head else 0, "token_steps": self.epoch_steps,
                 "budget": self.budget, "backbone_from": self.backbone_from, "view": self.view}
        return tc, extra

    def run_dir(self, v: Variant, seed: int, temperature: float | None = None) -> Path:
        tc, extra = self.train_config(v, seed, temperature)
        sig = {**tc.run_signature(), "epochs": tc.epochs, "patience": tc.patience, **extra,
               "steps": self.steps, "seconds": self.seconds}
        digest = cache_key(sig, length=10)
        safe = v.name.replace(" ", "_").replace("+", "-")
        return Path(self.cfg.work) / "runs" / f"{safe}-{self.budget}-s{seed}-{digest}"

    def untrained(self, v: Variant):
        model = super().untrained(v)
        if self._backbone_state is not None:
            model.backbone.load_state_dict(self._backbone_state)
        return model

    def make_trainer(self, tc, extra):
        trainer = ExperimentTrainer(tc, self.provider, extra["head_tokens"], extra["token_steps"],
                                    progress=self.progress, log=self.log, plot=self.cfg.run_plots)
        if self._backbone_state is not None:
            trainer.model.backbone.load_state_dict(self._backbone_state)
        return trainer

    def evaluate(self, model) -> dict:
        out = {name: score_embeddings(self.embed(model, recs), recs) for name, recs in self.viewed_sets}
        if self.repo is not None:
            out[self.repo.name] = score_repo(self.embed(model, self.repo.records), self.repo)
        return out


def _steps_done(run_dir: Path) -> int:
    history = read_json(Path(run_dir) / "training" / "history.json")
    return len(history.get("step_loss", []))


def run_fair(runner: FairRunner, out_dir: str | Path, rows: Sequence[str] | None = None,
             budgets: Sequence[str] = BUDGETS, prefix_seeds: int = 0, command: str | None = None,
             report_only: bool = False) -> dict:
    """Train and score every row with every seed under each budget; write fair.{json,md}.

    Finished runs are kept in ``out_dir/fair_runs.json`` and skipped on a re-run (resumable);
    ``report_only`` trains nothing and reports the finished runs (with the seeds each row got)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    done_path = out_dir / "fair_runs.json"
    done: dict = read_json(done_path) if done_path.exists() else {}
    chosen = select_rows(rows)
    jobs = [(b, v, s) for b in budgets for v in chosen
            for s in (runner.cfg.seeds[:prefix_seeds] if is_prefix(v) else runner.cfg.seeds)]
    t_start = time.time()
    for n, (budget, v, seed) in enumerate(jobs, 1):
        key = f"{budget}|{v.name}|{seed}"
        if key in done or report_only:
            continue
        runner.budget = budget
        runner.log(f"[fair {n}/{len(jobs)}] {v.name}, {budget} budget, seed {seed}")
        model, run = runner.train(v, seed)
        scores = runner.evaluate(model)
        done[key] = {"budget": budget, "row": v.name, "seed": seed, "seconds": run.seconds,
                     "steps": _steps_done(Path(run.run_dir)), "best_epoch": run.best_epoch, "scores": scores}
        write_json_atomic(done_path, done)
    reference = _reference(runner, out_dir)
    data = {"experiment": "fair", "config": runner.cfg.to_dict(), "data": runner.prepared.describe(),
            "view": runner.view, "backbone_from": runner.backbone_from, "steps": runner.steps,
            "seconds_budget": runner.seconds, "epoch_steps": runner.epoch_steps,
            "reference": reference, "rows": _summary(done, chosen, budgets), "runs": done,
            "seconds": round(time.time() - t_start, 1)}
    write_outputs(out_dir, "fair", data, _markdown(data, command))
    return data


def _reference(runner: FairRunner, out_dir: Path) -> dict:
    """Scores of the untrained identity start (the frozen backbone's pooled vector), cached."""
    path = out_dir / "fair_reference.json"
    if path.exists():
        return read_json(path)
    ref = {"identity start": runner.evaluate(runner.untrained(Variant("identity", "untrained", head="none",
                                                                       trained=False)))}
    if runner.cfg.head_tokens:  # what the over-tokens heads start from: the mean of their token window
        tokens = runner.untrained(Variant("tokens", "untrained", head_mode="tokens", trained=False))
        ref[f"identity start, first {runner.cfg.head_tokens} tokens"] = runner.evaluate(tokens)
    write_json_atomic(path, ref)
    return ref


def _summary(done: dict, chosen: list[Variant], budgets: Sequence[str]) -> dict:
    out: dict = {}
    for b in budgets:
        for v in chosen:
            runs = [r for r in done.values() if r["budget"] == b and r["row"] == v.name]
            if not runs:
                continue
            sets = list(runs[0]["scores"])
            agg = {s: aggregate([r["scores"][s] for r in runs], keys=("map_at_r",)) for s in sets}
            out[f"{b}|{v.name}"] = {"budget": b, "row": v.name, "label": v.label, "seeds": len(runs),
                                    "steps": mean_std([r["steps"] for r in runs]),
                                    "seconds": mean_std([r["seconds"] for r in runs]), "scores": agg}
    return out


def _backbone_words(data: dict) -> str:
    if data["backbone_from"]:
        return f"the weights of `{data['backbone_from']}`"
    name = data["config"]["backbone"]
    return f"{'the embedded all-MiniLM-L6-v2' if name == 'default' else f'`{name}`'} as downloaded (untuned)"


def _markdown(data: dict, command: str | None) -> str:
    rows = list(data["rows"].values())
    sets = list(rows[0]["scores"]) if rows else []
    lines = [f"# Fair comparison of the heads ({len(rows)} row-budgets)", "",
             f"Command: `{command}`" if command else "", "",
             f"Backbone: frozen, {_backbone_words(data)}; view `{data['view']}`; budgets: {data['steps']} "
             f"optimiser steps, or {data['seconds_budget']:g} s of training (dev checks every "
             f"{data['epoch_steps']} steps included). \"train s\": wall seconds of the run (the very first run "
             "also computed the cached backbone states).", ""]
    for name, ref in data["reference"].items():
        lines.append(f"- {name} (step 0): " + ", ".join(f"{s} {fmt(ref[s]['map_at_r'])}" for s in sets if s in ref))
    lines.append("")
    for b in BUDGETS:
        chosen = [r for r in rows if r["budget"] == b]
        if not chosen:
            continue
        table = [[r["row"], r["seeds"], f"{r['steps'][0]:.0f}", f"{r['seconds'][0]:.0f}",
                  *[f"{r['scores'][s]['map_at_r']['mean']:.3f} ± {r['scores'][s]['map_at_r']['std']:.3f}"
                    for s in sets]] for r in chosen]
        lines += [f"## Equal {b}", "", md_table(["row", "seeds", "steps", "train s", *[f"{s} MAP@R" for s in sets]],
                                                 table), ""]
    return "\n".join(lines)
