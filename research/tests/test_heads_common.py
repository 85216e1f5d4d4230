"""Properties of every head kind, the product's and the research suite's (plugged in): padding invariance,
pooled input, control codes, gradients, shapes."""

from __future__ import annotations

import pytest
import torch

from conba.heads import Head, HeadConfig, build_head, head_kinds

D = 8
LANGS = ["python", "Java", "cpp"]
CONFIGS = {
    "none-mean": dict(kind="none"),
    "none-cls": dict(kind="none", pooling="cls"),
    "linear-mean": dict(kind="linear"),
    "linear-cls": dict(kind="linear", pooling="cls", out_dim=5),
    "conba-pooled": dict(kind="conba", out_dim=5),
    "conba-pooled-cls": dict(kind="conba", pooling="cls", languages=LANGS),
    "conba-pooled-codes": dict(kind="conba", languages=LANGS),
    "conba-tokens": dict(kind="conba", mode="tokens", out_dim=5),
    "conba-tokens-codes": dict(kind="conba", mode="tokens", languages=LANGS),
    "conba-tokens-nofb": dict(kind="conba", mode="tokens", use_feedback=False),
    "conba-scan": dict(kind="conba-scan", out_dim=5),
    "conba-scan-codes": dict(kind="conba-scan", languages=LANGS, dt_rank=3),
    "conba-scan-noctrl": dict(kind="conba-scan", use_control=False, languages=LANGS),
}


def make(name: str, seed: int = 0, dtype: torch.dtype = torch.float64) -> Head:
    """A head whose every parameter is moved off its init (so identity/zero inits hide nothing)."""
    torch.manual_seed(seed)
    head = build_head(HeadConfig(dim=D, state_dim=4, code_dim=3, **CONFIGS[name])).to(dtype)
    with torch.no_grad():
        for p in head.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return head


def snippets(seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, D, generator=g, dtype=torch.float64) for n in (3, 7, 5)]


def padded(xs: list[torch.Tensor], length: int, left: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch with junk (not zeros) in the padding."""
    x = torch.full((len(xs), length, D), 13.0, dtype=torch.float64)
    mask = torch.zeros(len(xs), length, dtype=torch.long)
    for i, s in enumerate(xs):
        sl = slice(length - len(s), length) if left else slice(0, len(s))
        x[i, sl], mask[i, sl] = s, 1
    return x, mask


@pytest.mark.parametrize("name", CONFIGS)
def test_padding_never_changes_an_embedding(name: str) -> None:
    head = make(name)
    xs, lang = snippets(), torch.tensor([1, 2, 0])
    with torch.no_grad():
        alone = torch.cat([head(s[None], None, lang[i:i + 1]) for i, s in enumerate(xs)])
        for left in (False, True):
            for length in (7, 11):
                x, mask = padded(xs, length, left)
                got = head(x, mask if length > 7 or left else mask.bool(), lang)
                torch.testing.assert_close(got, alone, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", CONFIGS)
def test_output_shape(name: str) -> None:
    head = make(name, dtype=torch.float32)
    out = head(torch.randn(4, 6, D), torch.ones(4, 6, dtype=torch.bool))
    expected = CONFIGS[name].get("out_dim", D)
    assert out.shape == (4, expected) and out.dtype == torch.float32
    assert head.out_dim == expected


@pytest.mark.parametrize("name", [n for n in CONFIGS if CONFIGS[n].get("mode") != "tokens"
                                  and CONFIGS[n]["kind"] != "conba-scan"])
def test_pooled_heads_accept_pooled_input(name: str) -> None:
    head = make(name)
    assert not head.needs_tokens
    xs, lang = snippets(1), torch.tensor([2, 0, 1])
    x, mask = padded(xs, 9, left=True)
    if head.config.pooling == "mean":
        pooled = torch.stack([s.mean(0) for s in xs])
    else:
        pooled = torch.stack([s[0] for s in xs])
    with torch.no_grad():
        torch.testing.assert_close(head(pooled, None, lang), head(x, mask, lang), rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="mask=None"):
        head(pooled, mask)


@pytest.mark.parametrize("name", ["conba-tokens", "conba-scan"])
def test_token_heads_need_tokens(name: str) -> None:
    head = make(name)
    assert head.needs_tokens
    with pytest.raises(ValueError, match=r"\(b, l, d\)"):
        head(torch.zeros(2, D, dtype=torch.float64), None)


def test_needs_tokens_per_kind() -> None:
    assert set(head_kinds()) == {"conba", "conba-scan", "linear", "none"}  # the research suite's plugged in
    assert not make("none-mean").needs_tokens and not make("linear-mean").needs_tokens
    assert not make("conba-pooled").needs_tokens
    assert make("conba-tokens").needs_tokens and make("conba-scan").needs_tokens


def test_init_identities() -> None:
    x = torch.randn(3, D)
    torch.testing.assert_close(build_head(HeadConfig(kind="linear", dim=D))(x, None), x)
    assert list(build_head(HeadConfig(kind="none", dim=D)).parameters()) == []
    assert build_head(HeadConfig(kind="conba", dim=D)).control_weight_snapshot() == [1.0] * D
    assert build_head(HeadConfig(kind="linear", dim=D)).control_weight_snapshot() == []


@pytest.mark.parametrize("base", ["conba-pooled", "conba-tokens", "conba-scan"])
def test_control_codes(base: str) -> None:
    plain = make(base)
    cfg = {**plain.config.to_dict(), "languages": ["python", "java"]}
    torch.manual_seed(5)
    coded = build_head(HeadConfig.from_dict(cfg)).double()
    coded.load_state_dict({**coded.state_dict(), **plain.state_dict()})  # same weights, codes at init
    assert coded.language_ids(["python", "COBOL", "Java", None, ""]).tolist() == [1, 0, 2, 0, 0]
    assert coded.language_ids(["python"]).dtype == torch.long
    x, mask = padded(snippets(2), 8, left=False)
    py, java, unknown = torch.ones(3, dtype=torch.long), torch.full((3,), 2), torch.zeros(3, dtype=torch.long)
    with torch.no_grad():
        ref = plain(x, mask)
        for ids in (py, java, unknown, None):  # W = 0 at init: codes change nothing
            torch.testing.assert_close(coded(x, mask, ids), ref, rtol=0, atol=1e-12)
        coded.codes.W.weight.normal_()
        assert not torch.allclose(coded(x, mask, py), coded(x, mask, java))
        assert not torch.allclose(coded(x, mask, py), ref)
        torch.testing.assert_close(coded(x, mask, None), coded(x, mask, unknown), rtol=0, atol=0)
        expected = coded.control_weight + coded.codes.W(coded.codes.codes.weight[0])
        assert coded.control_weight_snapshot() == pytest.approx(expected.tolist())


def test_control_codes_ignored_without_control() -> None:
    head = make("conba-scan-noctrl")
    assert head.codes is None and head.control_weight_snapshot() == []
    assert head.language_ids(["cpp", "rust"]).tolist() == [3, 0]
    x, mask = padded(snippets(3), 7, left=False)
    with torch.no_grad():
        torch.testing.assert_close(head(x, mask, torch.tensor([1, 2, 3])), head(x, mask), rtol=0, atol=0)


@pytest.mark.parametrize("name", CONFIGS)
def test_gradients_reach_every_parameter(name: str) -> None:
    head = make(name, dtype=torch.float32)
    x = torch.randn(3, 6, D, requires_grad=True)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [0] * 3 + [1] * 3])
    out = head(x, mask, torch.tensor([0, 1, 2]))
    (out ** 2).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    for pname, p in head.named_parameters():
        assert p.grad is not None, pname
        assert torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, pname


def test_zero_inits_open_one_after_the_other() -> None:
    """fc2 = 0 (residual) and W = 0 (codes): at step 0 only fc2 has a gradient; without the residual W
    has one and the code embedding waits for W to move off zero."""
    x, ids = torch.randn(2, 4, D), torch.tensor([1, 2])
    head = build_head(HeadConfig(kind="conba", dim=D, languages=LANGS))
    head(x, None, ids).square().sum().backward()
    assert head.fc2.weight.grad.abs().sum() > 0
    assert head.codes.W.weight.grad.abs().sum() == 0 and head.selective_fc.weight.grad.abs().sum() == 0
    legacy = build_head(HeadConfig(kind="conba", dim=D, languages=LANGS, residual=False))
    legacy(x, None, ids).sum().backward()
    assert legacy.codes.W.weight.grad.abs().sum() > 0  # W (zero at init) is trained
    assert legacy.codes.codes.weight.grad.abs().sum() == 0  # codes wait for W to move off zero


def test_bad_inputs_raise() -> None:
    head = make("conba-scan-codes")
    with pytest.raises(ValueError, match="mask shape"):
        head(torch.zeros(2, 5, D, dtype=torch.float64), torch.ones(2, 4))
    with pytest.raises(ValueError, match="lang_ids"):
        head(torch.zeros(2, 5, D, dtype=torch.float64), None, torch.tensor([1, 2, 3]))
