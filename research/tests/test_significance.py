"""The paired bootstrap behind conba experiment significance."""

from __future__ import annotations

import numpy as np
import pytest

from conba_research.significance import paired_bootstrap


def test_no_difference_is_a_zero_interval_and_a_clear_one_is_beyond_chance():
    same = paired_bootstrap([0.2, 0.5, 1.0], [0.2, 0.5, 1.0])
    assert (same.mean, same.low, same.high, same.wins, same.losses) == (0, 0, 0, 0, 0) and not same.significant
    rng = np.random.default_rng(1)
    base = rng.random(80)
    better = paired_bootstrap(base + 0.1 + rng.normal(0, 0.02, 80), base)
    assert better.significant and 0.08 < better.low < better.mean < better.high < 0.12 and better.wins == 80


def test_one_flip_in_thirty_queries_is_within_chance_and_the_seed_repeats():
    a, b = [1.0] * 30, [1.0] * 29 + [0.0]
    r = paired_bootstrap(b, a, samples=2000, seed=3)
    assert r.mean == pytest.approx(-1 / 30) and r.losses == 1 and r.high == 0 and not r.significant
    assert r == paired_bootstrap(b, a, samples=2000, seed=3)


@pytest.mark.parametrize("a, b, kw, words", [([1.0], [1.0, 2.0], {}, "paired"), ([], [], {}, "no queries"),
                                             ([1.0], [1.0], {"level": 1.0}, "level"),
                                             ([1.0], [1.0], {"samples": 0}, "samples")])
def test_bad_input(a, b, kw, words):
    with pytest.raises(ValueError, match=words):
        paired_bootstrap(a, b, **kw)
