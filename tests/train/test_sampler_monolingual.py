"""GroupBatchSampler(monolingual_apart=True): one-language groups never share a batch with another language."""

from conba.train.sampler import GroupBatchSampler


def _data():
    groups, langs = [], []
    for g in range(6):  # cross-language groups
        for lang in ("python", "java", "go"):
            groups.append(f"x{g}")
            langs.append(lang)
    for lang in ("python", "rust"):  # mined: a function, its doc and a renamed copy, one language
        for g in range(8):
            for _ in range(3):
                groups.append(f"{lang}{g}")
                langs.append(lang)
    return groups, langs


def test_monolingual_groups_are_batched_per_language():
    groups, langs = _data()
    s = GroupBatchSampler(groups, langs, p=3, k=2, seed=0, monolingual_apart=True)
    kinds = set()
    for batch in s.epoch(1) + s.epoch(2):
        mono = {langs[i] for i in batch if not groups[i].startswith("x")}
        cross = [i for i in batch if groups[i].startswith("x")]
        assert not (mono and cross), "a batch mixes cross-language groups with one-language groups"
        assert len(mono) <= 1, f"one-language groups of {mono} in one batch"
        kinds.add("cross" if cross else mono.pop())
    assert kinds == {"cross", "python", "rust"}


def test_mixed_by_default_and_reproducible():
    groups, langs = _data()
    s = GroupBatchSampler(groups, langs, p=3, k=2, seed=0)
    mixed = any(len({langs[i] for i in b if not groups[i].startswith("x")}) > 1
                or (any(groups[i].startswith("x") for i in b) and any(not groups[i].startswith("x") for i in b))
                for b in s.epoch(1) + s.epoch(2) + s.epoch(3))
    assert mixed
    a = GroupBatchSampler(groups, langs, p=3, k=2, seed=0, monolingual_apart=True)
    b = GroupBatchSampler(groups, langs, p=3, k=2, seed=0, monolingual_apart=True)
    assert a.epoch(4) == b.epoch(4)


def test_hard_negative_neighbours_stay_in_the_pool():
    groups, langs = _data()
    neighbours = {"python0": ["rust0", "python1"], "x0": ["python2", "x1"]}
    s = GroupBatchSampler(groups, langs, p=4, k=2, seed=0, neighbours=neighbours, monolingual_apart=True)
    for batch in s.epoch(1):
        kinds = {"x" if groups[i].startswith("x") else langs[i] for i in batch}
        assert len(kinds) == 1
