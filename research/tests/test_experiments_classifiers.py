import numpy as np
import pytest
import torch

from conba_research.classifiers import CLASSIFIERS, PairClassifier, train_pairs
from conba_research.pair_models import NETS


def toy_pairs(n=120, d=16, seed=0):
    """Clones are noisy copies of the anchor, non-clones are independent vectors (L2-normalised)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, d))
    v = np.where((np.arange(n) % 2 == 0)[:, None], u + 0.3 * rng.normal(size=(n, d)), rng.normal(size=(n, d)))
    y = (np.arange(n) % 2 == 0).astype(np.int64)
    norm = lambda a: (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    return norm(u), norm(v), y


def test_registry_has_the_issue_classifiers():
    assert set(CLASSIFIERS) == {"mlp", "gru", "cnn", "bilstm", "resmlp", "logreg", "svm", "random_forest", "knn"}


@pytest.mark.parametrize("kind", CLASSIFIERS)
def test_every_classifier_trains_and_predicts(kind):
    u, v, y = toy_pairs()
    tu, tv, ty = toy_pairs(seed=1)
    clf = PairClassifier(kind, seed=0, epochs=25).fit(u, v, y)
    scores = clf.scores(tu, tv)
    assert scores.shape == (len(ty),) and np.all((scores >= 0) & (scores <= 1))
    pred = clf.predict(tu, tv)
    assert set(np.unique(pred)) <= {0, 1}
    assert np.mean(pred == ty) > 0.75, f"{kind} should separate the toy pairs"


@pytest.mark.parametrize("kind", list(NETS))
def test_torch_heads_are_symmetric(kind):
    torch.manual_seed(0)
    net = NETS[kind](8).eval()
    u, v = torch.randn(5, 8), torch.randn(5, 8)
    with torch.no_grad():
        assert torch.allclose(net(u, v), net(v, u), atol=1e-5)
        assert net(u, v).shape == (5,)


def test_bad_inputs():
    u, v, y = toy_pairs(n=10)
    with pytest.raises(ValueError, match="unknown classifier"):
        PairClassifier("xgboost")
    with pytest.raises(ValueError, match="same"):
        PairClassifier("logreg").fit(u, v[:, :4], y)
    with pytest.raises(ValueError, match="labels"):
        PairClassifier("logreg").fit(u, v, y[:5])
    with pytest.raises(ValueError, match="both labels"):
        PairClassifier("logreg").fit(u, v, np.ones_like(y))
    with pytest.raises(RuntimeError, match="not fitted"):
        PairClassifier("mlp").scores(u, v)


def test_train_pairs_are_balanced_and_capped():
    from conba.data import CodeRecord

    recs = [CodeRecord(f"{g}{lang}", g, lang, "x") for g in "abcd" for lang in ("java", "python")]
    emb = np.eye(len(recs), dtype=np.float32)
    u, v, y = train_pairs(recs, emb, 7)
    assert len(y) == 6 and y.sum() == 3
    assert u.shape == v.shape == (6, len(recs))
