"""``conba experiment``: the research experiment suite (ablation, classifiers, temperature, figures, noise, all)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from conba.cli.common import friendly_errors
from conba.cli.options import (
    CACHE_ENV,
    FINITE_FLOAT,
    THREADS_ENV,
    VIEW_NAMES,
    AliasOption,
    batch_size_option,
    data_files_option,
    dev_files_option,
    device_option,
    limit_option,
    model_option,
    output_dir_option,
    placement_options,
    progress_option,
    seed_option,
)
from conba.cli.paths import InputPath
from conba_research.renamed_commands import RenamedCommands

_FILE = InputPath(dir_okay=False, path_type=Path)
_DIR = InputPath(file_okay=False, path_type=Path)

# option name -> ExperimentConfig field, for the options shared by the training-based subcommands
_CFG_OPTIONS = ("backbone", "max_length", "cap", "train_limit", "dev_limit", "epochs", "patience",
                "groups_per_batch", "per_group", "temperature", "head_tokens", "token_steps", "token_epochs",
                "batch_size", "cache_dir", "device", "threads", "work")


def _numbers(text: str | None, kind: type, what: str) -> list | None:
    if text is None:
        return None
    try:
        return [kind(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated {what}, got '{text}'") from None


def _floats(text: str | None) -> list[float] | None:
    return _numbers(text, float, "numbers")


def _ints(text: str | None) -> list[int] | None:
    return _numbers(text, int, "integers")


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [x for x in text.replace(" ", "").split(",") if x]


def common_options(f):
    """Data, output, budget and device options shared by every training-based subcommand."""
    opts = [
        click.option("--data-dir", "data", type=_DIR, metavar="DIR", cls=AliasOption,
                     deprecated_aliases=["-d", "--data"],
                     help="Folder with *_train.jsonl and *_dev.jsonl files."),
        click.option("--train", "train_files", multiple=True, type=_FILE, help="Training file (repeatable)."),
        dev_files_option(name="dev_files",
                         help="Dev file (repeatable); the first is the early-stopping set, all are evaluated."),
        output_dir_option("Output folder (JSON, markdown, PNGs)."),
        click.option("-w", "--work", default=None,
                     help="Folder for data subsets and trained models (default runs/experiments); reused."),
        click.option("-q", "--quick", is_flag=True, help="Tiny CI-sized settings (minutes); every part still runs."),
        click.option("--backbone", default=None, help="HF encoder name or folder; default: embedded MiniLM."),
        click.option("--max-length", type=int, default=None, help="Token cap (default 256; quick 128)."),
        click.option("--cap", type=int, default=None, help="Max training snippets per (group, language) (2; quick 1)."),
        click.option("--train-limit", type=int, default=None, help="Then ~N training snippets (whole groups)."),
        click.option("--dev-limit", type=int, default=None, help="~N records of whole groups per dev file (1500)."),
        click.option("--seeds", default=None, help="Comma-separated training seeds (default 0,1,2; quick 0,1)."),
        click.option("-e", "--epochs", type=int, default=None, help="Max epochs of pooled heads (8; quick 2)."),
        click.option("--patience", type=int, default=None, help="Early-stopping patience (3)."),
        click.option("-P", "--groups-per-batch", type=int, default=None, help="Groups per batch P (32)."),
        click.option("-K", "--per-group", type=int, default=None, help="Snippets per group K (4)."),
        click.option("--temperature", type=FINITE_FLOAT, default=None, help="Loss temperature τ (0.05)."),
        click.option("--head-tokens", type=int, default=None,
                     help="Over-tokens heads read the first T token states (32; 0 = all, use on a GPU)."),
        click.option("--token-steps", type=int, default=None, help="Batches/epoch, over-tokens heads (20)."),
        click.option("--token-epochs", type=int, default=None, help="Max epochs of over-tokens heads (1)."),
        batch_size_option(default=None, help="Snippets per encoder batch, encoding and evaluation (64)."),
        click.option("--cache-dir", default=None, envvar=CACHE_ENV, show_envvar=True,
                     help="Feature cache (default ~/.cache/conba)."),
        device_option(help="Where to train and encode"),
        click.option("--threads", type=int, default=None, envvar=THREADS_ENV, show_envvar=True,
                     help="Torch CPU threads (default: torch's; 1 is much faster when other jobs share the CPU)."),
        progress_option(),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def build_config(opts: dict):
    """An ExperimentConfig from the parsed options (``quick`` preset first, explicit options win)."""
    from conba_research.config import ExperimentConfig, discover

    cfg = ExperimentConfig.quick_preset() if opts.pop("quick", False) else ExperimentConfig()
    data, train, dev = opts.pop("data", None), list(opts.pop("train_files", ())), list(opts.pop("dev_files", ()))
    if data is not None:
        found_train, found_dev = discover(data)
        train, dev = train or found_train, dev or found_dev
    cfg.train, cfg.dev = [str(p) for p in train], [str(p) for p in dev]
    seeds = _ints(opts.pop("seeds", None))
    if seeds is not None:
        cfg.seeds = seeds
    for name in _CFG_OPTIONS:
        value = opts.pop(name, None)
        if value is not None:
            setattr(cfg, name, value)
    return cfg.validate()


def _log(msg: str) -> None:
    click.echo(msg, err=True)


def command_line() -> str:
    """The running command, rebuilt from its parsed options (for the reports)."""
    ctx = click.get_current_context()
    parts = [f"conba experiment {ctx.info_name}"]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        # identity tests, not `value in (None, False, ())`: 0 == False would drop `--limit 0`
        unset = value is None or value is False or value == ()
        if unset or param.name == "progress" or not isinstance(param, click.Option):
            continue
        opt = max(param.opts, key=len)
        values = value if isinstance(value, tuple) else (value,)
        parts += [opt if v is True else f"{opt} {shlex.quote(str(v))}" for v in values]
    return " ".join(parts)


def _setup(opts: dict):
    """(cfg, runner, out, progress) for a training-based subcommand."""
    from conba.cli.common import show_progress
    from conba_research.data import prepare
    from conba_research.runner import Runner

    out = opts.pop("out")
    progress = opts.pop("progress", None)
    progress = show_progress(progress)
    cfg = build_config(opts)
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(cfg, prepare(cfg, _log), progress=progress, log=_log)
    return cfg, runner, out, progress


def _examples(text: str):
    def deco(f):
        f.__doc__ = (f.__doc__ or "") + "\n\n\b\nExamples:\n" + text
        return f
    return deco


@click.group("experiment", cls=RenamedCommands)
def experiment() -> None:
    """Research experiments on ConbaLayer heads: JSON + PNG figures + a markdown report per experiment.

    Training-based subcommands train heads on a frozen backbone (cached token states; --tune none),
    reuse finished runs from the work folder and resume interrupted ones.
    """
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None and "--help" not in sys.argv and "-h" not in sys.argv:
        raise click.ClickException("conba experiment draws its figures with matplotlib: pip install matplotlib")


@experiment.command("ablation")
@common_options
@click.option("--variants", default=None, help="Comma-separated subset of: no_conba, linear, conba, conba_codes, "
                                               "no_control, no_feedback, no_state_path, tokens, scan, conba_short "
                                               "(default: all).")
@friendly_errors
@_examples("  conba experiment ablation --data-dir ../shared/data -o docs/experiments/ablation\n"
           "  conba experiment ablation --data-dir ../shared/data -o runs/abl --variants conba,no_control \\\n"
           "      --seeds 0,1,2")
def ablation_cmd(variants: str | None, **opts) -> None:
    """Ablation of the ConbaLayer (MAP@R per language pair, F1, AUC; mean ± std over seeds)."""
    from conba_research.ablation import run_ablation, select_variants

    names = _names(variants)
    select_variants(names)  # fail before any work on a bad name
    _, runner, out, _ = _setup(opts)
    run_ablation(runner, out, names, command=command_line())
    _log(f"wrote {out}/ablation.md")


@experiment.command("temperature")
@common_options
@click.option("--temperatures", default=None, help="Comma-separated τ values (default 0.05,0.1,0.2,0.3,0.5,1.0).")
@click.option("--temperature-seeds", type=int, default=None, help="How many of --seeds to train per τ (1).")
@friendly_errors
@_examples("  conba experiment temperature --data-dir ../shared/data -o docs/experiments/temperature\n"
           "  conba experiment temperature --data-dir ../shared/data -o runs/temp --temperatures 0.05,0.5")
def temperature_cmd(temperatures: str | None, temperature_seeds: int | None, **opts) -> None:
    """Temperature sweep: ROC curves in one figure, AUC and MAP@R per τ."""
    from conba_research.temperature import run_temperature

    temps = _floats(temperatures)
    if temps is not None and (not temps or any(t <= 0 for t in temps)):
        raise click.BadParameter("temperatures must be > 0", param_hint="--temperatures")
    if temperature_seeds is not None and temperature_seeds < 1:
        raise click.BadParameter("must be >= 1", param_hint="--temperature-seeds")
    cfg, runner, out, _ = _setup(opts)
    if temperature_seeds is not None:
        cfg.temperature_seeds = temperature_seeds
    run_temperature(runner, out, temps, command=command_line())
    _log(f"wrote {out}/temperature.md")


@experiment.command("classifiers")
@common_options
@model_option(envvar=False, help="Model whose embeddings to classify (default: train the reference head).")
@click.option("--classifiers", "kinds", default=None,
              help="Comma-separated subset of: mlp, gru, cnn, bilstm, resmlp, logreg, svm, random_forest, knn.")
@click.option("--pairs", type=int, default=None, help="Training pairs (default 4000; quick 600).")
@friendly_errors
@_examples("  conba experiment classifiers --data-dir ../shared/data -o docs/experiments/classifiers\n"
           "  conba experiment classifiers --data-dir ../shared/data -o runs/clf -m default --classifiers mlp,svm")
def classifiers_cmd(model: str | None, kinds: str | None, pairs: int | None, **opts) -> None:
    """Clone/not-clone classifiers on pairs of embeddings vs the cosine threshold.

    Without --model the reference head (ConbaLayer pooled + control codes, first seed) is trained
    (or reused from the work folder); with --model that model's embeddings are used.
    """
    from conba_research.classifiers import CLASSIFIERS, run_classifiers
    from conba_research.runner import REFERENCE

    names = _names(kinds)
    bad = [k for k in names or [] if k not in CLASSIFIERS]
    if bad:
        raise click.BadParameter(f"unknown classifier(s) {bad}; choose from {list(CLASSIFIERS)}",
                                 param_hint="--classifiers")
    if pairs is not None and pairs < 20:
        raise click.BadParameter("must be >= 20", param_hint="--pairs")
    cfg, runner, out, _ = _setup(opts)
    if pairs is not None:
        cfg.classifier_pairs = pairs
    if model:
        from conba.cli.common import load

        m, name = load(model, None, cfg.device), f"model `{model}`"
    else:
        m = runner.train(REFERENCE, cfg.seeds[0])[0]
        name = f"the reference head ({REFERENCE.label}, seed {cfg.seeds[0]})"
    run_classifiers(runner, m, out, names, model_name=name, command=command_line())
    _log(f"wrote {out}/classifiers.md")


@experiment.command("figures")
@common_options
@friendly_errors
@_examples("  conba experiment figures --data-dir ../shared/data -o docs/experiments/figures")
def figures_cmd(**opts) -> None:
    """t-SNE before/after training, control_weight over epochs, training and validation curves."""
    from conba_research.figures import run_figures

    _, runner, out, _ = _setup(opts)
    run_figures(runner, out, command=command_line())
    _log(f"wrote {out}/figures.md")


@experiment.command("noise")
@data_files_option("Dev records (grouped JSONL).", multiple=False, required=True)
@model_option
@output_dir_option("Output folder (noise.json, noise.png, noise.md).")
@click.option("-q", "--quick", is_flag=True, help="A small subset, for smoke tests.")
@click.option("--levels", default=None, help="Comma-separated noise levels in (0, 1] (default 0.05,0.10,0.15,0.20).")
@limit_option("~N records of whole groups (0 = all).", default=300)
@seed_option
@placement_options(help="Where to encode")
@progress_option
@friendly_errors
@_examples("  conba experiment noise -d ../shared/data/mbxp_dev.jsonl -o docs/experiments/noise\n"
           "  conba experiment noise -d dev.jsonl -m runs/my-model -o runs/noise --levels 0.1,0.3 --quick")
def noise_cmd(data: Path, model: str | None, out: Path, quick: bool, levels: str | None, limit: int, seed: int,
              progress: bool | None, device: str = "auto", dtype: str = "auto") -> None:
    """Noise robustness: MAP@R and F1 under synonym / insertion / swap / deletion perturbations."""
    from conba.cli.common import load, resolve_model_name, show_progress
    from conba.data import load_records
    from conba_research.data import group_subset
    from conba_research.suite import load_run_noise, optional_kwargs

    lv = _floats(levels)
    if lv is not None and (not lv or any(not 0 < x <= 1 for x in lv)):
        raise click.BadParameter("levels must be in (0, 1]", param_hint="--levels")
    if limit < 0:
        raise click.BadParameter("must be >= 0", param_hint="--limit")
    run_noise = load_run_noise()
    if run_noise is None:
        raise click.ClickException("the noise experiment is not available in this version of conba")
    records = group_subset(load_records(data), limit, seed)
    kwargs = {"levels": lv} if lv else {}
    run_noise(load(model, None, device, dtype), records, out, seed=seed, quick=quick,
              progress=show_progress(progress),
              **optional_kwargs(run_noise, command=command_line(), data_name=data.name,
                                model_name=resolve_model_name(model)),
              **kwargs)
    _log(f"wrote {out}/noise.md")


@experiment.command("all")
@common_options
@click.option("--skip", default=None, help="Comma-separated parts to skip: ablation, temperature, classifiers, "
                                           "figures, noise.")
@friendly_errors
@_examples("  conba experiment all --data-dir ../shared/data -o runs/suite-quick --quick\n"
           "  conba experiment all --data-dir ../shared/data -o docs/experiments")
def all_cmd(skip: str | None, **opts) -> None:
    """The whole suite: ablation, temperature, classifiers, figures, noise (OUT/<part>/) + OUT/README.md."""
    from conba.cli.common import show_progress
    from conba_research.suite import PARTS, run_all

    skipped = _names(skip) or []
    bad = [p for p in skipped if p not in PARTS]
    if bad:
        raise click.BadParameter(f"unknown part(s) {bad}; choose from {list(PARTS)}", param_hint="--skip")
    out = opts.pop("out")
    progress = opts.pop("progress", None)
    cfg = build_config(opts)
    run_all(cfg, out, parts=[p for p in PARTS if p not in skipped],
            progress=show_progress(progress), log=_log, command=command_line())
    _log(f"wrote {out}/README.md")



@experiment.command("fair")
@common_options
@click.option("--rows", default=None, help="Comma-separated rows (default: all; see conba_research.fair.ROWS).")
@click.option("--budgets", default="seconds,steps", show_default=True,
              help="Equal-budget modes to run: steps (same optimiser steps), seconds (same training time).")
@click.option("--steps", "fair_steps", type=int, default=300, show_default=True, help="The equal step budget.")
@click.option("--seconds", "fair_seconds", type=FINITE_FLOAT, default=60.0, show_default=True,
              help="The equal wall-clock budget per run (dev checks included).")
@click.option("--epoch-steps", type=int, default=50, show_default=True, help="Steps between dev checks.")
@click.option("--view", type=click.Choice(VIEW_NAMES), default="code+docs", show_default=True,
              help="Input view of every snippet (raw = none).")
@click.option("--backbone-from", default="default", show_default=True,
              help="Model whose (frozen) backbone weights every head sits on; '' = --backbone as downloaded.")
@click.option("--repo-index", type=_DIR, default=None,
              help="An index of real repositories (e.g. of algorithms_dev) to score file-level MAP@R on.")
@click.option("--repo-groups", type=_FILE, default=None, help="Its groups file (groups.jsonl).")
@click.option("--prefix-seeds", type=int, default=0, show_default=True,
              help="Seeds for the prefix-code rows (they run the whole backbone per step; 0 = skip them).")
@click.option("--report-only", is_flag=True, help="Train nothing: write the report from the finished runs.")
@friendly_errors
@_examples("  conba experiment fair --data-dir ../shared/data -o docs/experiments/fair --repo-index IDX \\\n"
           "      --repo-groups ../shared/data/algorithms_dev/groups.jsonl --max-length 512 --head-tokens 128")
def fair_cmd(rows: str | None, budgets: str, fair_steps: int, fair_seconds: float, epoch_steps: int, view: str,
             backbone_from: str, repo_index: Path | None, repo_groups: Path | None, prefix_seeds: int,
             report_only: bool, **opts) -> None:
    """Every head on one frozen backbone at equal steps and equal seconds, ≥ 3 seeds, curated + real code."""
    from conba.cli.common import show_progress
    from conba.syntax.view import check_view
    from conba_research.data import prepare
    from conba_research.fair import BUDGETS, FairRunner, load_repo_set, run_fair, select_rows

    names = _names(rows)
    select_rows(names)
    chosen_budgets = _names(budgets) or []
    if not chosen_budgets or any(b not in BUDGETS for b in chosen_budgets):
        raise click.BadParameter(f"choose from {', '.join(BUDGETS)}", param_hint="--budgets")
    if fair_steps < 1 or fair_seconds <= 0 or epoch_steps < 1 or prefix_seeds < 0:
        raise click.BadParameter("--steps, --seconds and --epoch-steps must be > 0, --prefix-seeds >= 0")
    if (repo_index is None) != (repo_groups is None):
        raise click.BadParameter("give --repo-index and --repo-groups together")
    check_view(view)
    out = opts.pop("out")
    progress = opts.pop("progress", None)
    progress = show_progress(progress)
    cfg = build_config(opts)
    out.mkdir(parents=True, exist_ok=True)
    repo = load_repo_set(repo_index, repo_groups, view) if repo_index is not None else None
    runner = FairRunner(cfg, prepare(cfg, _log), steps=fair_steps, seconds=fair_seconds, epoch_steps=epoch_steps,
                        view=view, backbone_from=backbone_from, repo=repo, progress=progress, log=_log)
    run_fair(runner, out, names, chosen_budgets, prefix_seeds, command=command_line(), report_only=report_only)
    _log(f"wrote {out}/fair.md")


from conba_research.tool_commands import add_tools  # noqa: E402  (the research tools, after the experiments)

add_tools(experiment)

import conba_research.cli_windows  # noqa: E402,F401  (registers `conba experiment windows`)
from conba_research.train_cmd import train  # noqa: E402  (conba train with the research knobs)

experiment.add_command(train)
