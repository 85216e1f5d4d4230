"""Clone / not-clone classifiers on pairs of embeddings, against the cosine-threshold baseline.

Glossary: n pairs, d embedding width.

Classifiers: torch heads (mlp, gru, cnn, bilstm, resmlp; see pair_models) and scikit-learn models
(logreg, svm, random_forest, knn) on the symmetric pair features [|u − v|, u ⊙ v] (n, 2d). All of them
are trained on label-balanced cross-language pairs of the *training* subset embedded by the model and
tested on the held-out half of each evaluation set's balanced pairs (decision at probability 0.5). The
cosine baseline thresholds the cosine similarity, calibrated on the same training pairs, and once more
on the evaluation set's calibration half.
"""

from __future__ import annotations

import time

import numpy as np

from conba.errors import ConfigError
from conba.eval.pairs import balanced_pairs, calibrate_threshold, classification_metrics
from conba_research.metrics import pair_split
from conba_research.pair_models import NETS, fit_net, net_scores
from conba_research.report import fmt, md_table, pyplot, save_figure, settings_block, write_outputs

SKLEARN_KINDS = ("logreg", "svm", "random_forest", "knn")
CLASSIFIERS: tuple[str, ...] = (*NETS, *SKLEARN_KINDS)


def _features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.concatenate([np.abs(u - v), u * v], axis=1)


class PairClassifier:
    """One classifier kind with ``fit(u, v, y)`` and ``scores(u, v)`` (clone probability in [0, 1])."""

    def __init__(self, kind: str, seed: int = 0, epochs: int = 30, device: str = "cpu"):
        if kind not in CLASSIFIERS:
            raise ConfigError(f"unknown classifier '{kind}'; choose from {list(CLASSIFIERS)}")
        self.kind, self.seed, self.epochs, self.device = kind, seed, epochs, device
        self.model = None

    def _sklearn(self):
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn.svm import SVC

        return {"logreg": lambda: LogisticRegression(max_iter=2000),
                "svm": lambda: SVC(kernel="rbf", C=1.0, random_state=self.seed),
                "random_forest": lambda: RandomForestClassifier(n_estimators=100, random_state=self.seed),
                "knn": lambda: KNeighborsClassifier(n_neighbors=15)}[self.kind]()

    def fit(self, u: np.ndarray, v: np.ndarray, y: np.ndarray) -> PairClassifier:
        """Args: u, v: shape (n, d); y: shape (n,) with 0 (not a clone) / 1 (clone)."""
        u, v, y = np.asarray(u, np.float32), np.asarray(v, np.float32), np.asarray(y)
        if u.shape != v.shape or u.ndim != 2 or len(y) != len(u):
            raise ValueError(f"fit needs u, v of the same (n, d) shape and n labels; got {u.shape}, {v.shape}, "
                             f"{np.shape(y)}")
        if set(np.unique(y).tolist()) != {0, 1}:
            raise ValueError("fit needs both labels 0 and 1 among the pairs")
        if self.kind in NETS:
            import torch

            torch.manual_seed(self.seed)
            self.model = fit_net(NETS[self.kind](u.shape[1]), u, v, y, epochs=self.epochs, seed=self.seed,
                                 device=self.device)
        else:
            self.model = self._sklearn().fit(_features(u, v), y)
        return self

    def scores(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("classifier is not fitted; call fit() first")
        u, v = np.asarray(u, np.float32), np.asarray(v, np.float32)
        if self.kind in NETS:
            return net_scores(self.model, u, v, device=self.device)
        x = _features(u, v)
        if self.kind == "svm":
            return 1.0 / (1.0 + np.exp(-self.model.decision_function(x)))
        return self.model.predict_proba(x)[:, 1]

    def predict(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (self.scores(u, v) >= 0.5).astype(np.int64)


def train_pairs(records, emb: np.ndarray, n_pairs: int, seed: int = 0):
    """``(u, v, y)``: about ``n_pairs`` balanced cross-language pairs of the training records."""
    i, j, y = balanced_pairs([r.group for r in records], [r.language for r in records], seed=seed)
    keep = min(len(i), n_pairs - n_pairs % 2)
    return emb[i[:keep]], emb[j[:keep]], y[:keep]


def run_classifiers(runner, model, out_dir, kinds=None, model_name: str = "", command: str | None = None) -> dict:
    """Fit every classifier on training pairs; write classifiers.{json,md} and classifiers.png."""
    cfg, t_start = runner.cfg, time.time()
    kinds = list(kinds or CLASSIFIERS)
    for k in kinds:
        if k not in CLASSIFIERS:
            raise ConfigError(f"unknown classifier '{k}'; choose from {list(CLASSIFIERS)}")
    train_emb = runner.embed(model, runner.prepared.train_records)
    u, v, y = train_pairs(runner.prepared.train_records, train_emb, cfg.classifier_pairs, cfg.data_seed)
    tests = {}
    for s in runner.prepared.eval_sets:
        emb = runner.embed(model, s.records)
        i, j, labels, calib = pair_split(s.records)
        tests[s.name] = {"u": emb[i], "v": emb[j], "y": labels, "calib": calib}
    results: dict = {}
    train_cos = np.sum(u * v, axis=1)
    thr_train = calibrate_threshold(train_cos, y)
    for name, t in tests.items():
        cos = np.sum(t["u"] * t["v"], axis=1)
        test = ~t["calib"]
        thr_dev = calibrate_threshold(cos[t["calib"]], t["y"][t["calib"]])
        results.setdefault("cosine (train threshold)", {"train_seconds": 0.0})[name] = classification_metrics(
            cos[test], t["y"][test], thr_train)
        results.setdefault("cosine (dev-calibrated)", {"train_seconds": 0.0})[name] = classification_metrics(
            cos[test], t["y"][test], thr_dev)
    for n, kind in enumerate(kinds, 1):
        runner.log(f"[classifiers {n}/{len(kinds)}] {kind} on {len(y)} pairs")
        t0 = time.time()
        clf = PairClassifier(kind, seed=cfg.seeds[0], epochs=cfg.classifier_epochs,
                             device=str(runner.device)).fit(u, v, y)
        entry = {"train_seconds": round(time.time() - t0, 2)}
        for name, t in tests.items():
            test = ~t["calib"]
            t1 = time.time()
            sc = clf.scores(t["u"][test], t["v"][test])
            entry[name] = {**classification_metrics(sc, t["y"][test], 0.5),
                           "predict_seconds": round(time.time() - t1, 3)}
        results[kind] = entry
    seconds = time.time() - t_start
    data = {"experiment": "classifiers", "model": model_name, "config": cfg.to_dict(),
            "data": runner.prepared.describe(), "train_pairs": int(len(y)), "seconds": round(seconds, 1),
            "results": results}
    set_names = list(tests)
    fig = _plot(results, set_names, out_dir)
    headers = ["classifier"] + [f"{s} {m}" for s in set_names for m in ("acc", "P", "R", "F1", "AUC")] + ["train s"]
    rows = [[f"`{k}`"] + [fmt(e[s][m]) for s in set_names for m in ("accuracy", "precision", "recall", "f1", "roc_auc")]
            + [f"{e['train_seconds']:.1f}"] for k, e in results.items()]
    md = "\n".join([
        "# Clone classifiers on pairs of embeddings", "",
        f"Embeddings from {model_name or 'the model'}; {len(y)} label-balanced cross-language training pairs "
        "from the training subset; tested on the held-out half of each evaluation set's balanced pairs "
        "(decision at probability 0.5; the cosine rows threshold the cosine similarity).", "",
        md_table(headers, rows), "", f"![{fig}]({fig})", "",
        settings_block(cfg, runner.prepared, seconds, command)])
    write_outputs(out_dir, "classifiers", data, md)
    return data


def _plot(results: dict, set_names: list[str], out_dir) -> str:
    plt = pyplot()
    names = list(results)
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.42 * len(names) * len(set_names) + 2.5), sharey=True)
    height = 0.8 / len(set_names)
    yy = np.arange(len(names))
    for ax, (key, title) in zip(axes[:2], [("f1", "F1"), ("roc_auc", "ROC AUC")]):
        for k, s in enumerate(set_names):
            ax.barh(yy + k * height, [results[n][s][key] for n in names], height, label=s)
        ax.set(title=f"clone-pair {title} (held-out pairs)", xlabel=title, xlim=(0, 1))
        ax.grid(axis="x", alpha=0.3)
    secs = [max(results[n]["train_seconds"], 1e-3) for n in names]
    axes[2].barh(yy + height * (len(set_names) - 1) / 2, secs, 0.6, color="tab:grey")
    axes[2].set_xscale("log")
    axes[2].set(title="training time (cosine rows: none)", xlabel="seconds (log scale)")
    axes[2].grid(axis="x", alpha=0.3)
    axes[0].set_yticks(yy + height * (len(set_names) - 1) / 2, names)
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, title="eval set", loc="lower center", ncol=len(set_names), bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("Pair classifiers vs the cosine threshold")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return save_figure(fig, f"{out_dir}/classifiers.png")
