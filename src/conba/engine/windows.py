"""Inputs longer than the backbone's window: cut the token ids into windows and pool them back.

Glossary: n snippets, c windows in all, w tokens per window without special tokens. The word is *window*
(earlier code and notes said chunk or fragment); the file formats keep ``max_chunks`` (:mod:`conba.model.persist`).

A snippet of t content tokens (special tokens not counted) that does not fit the window
(``w = max_length - specials``) is cut into ``k = ceil(t / w)`` windows of near-equal size (not
``k - 1`` full windows and a tiny tail), each wrapped in the tokenizer's own special tokens. With
``max_windows`` set and ``k > max_windows``, ``max_windows`` windows are spread evenly over the whole
snippet (first and last included), so a long template in front of a solution cannot hide it.

:func:`pool_windows` averages the windows' head outputs weighted by their content tokens. For the
pooled heads (``none``, ``linear``) that is exactly the mean over all the snippet's tokens of what
one long window would give, up to the attention each window cannot see across its border.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conba.errors import ConfigError

if TYPE_CHECKING:  # the ONNX query encoder cuts windows without torch
    import torch

TRUNCATE = 1  # max_windows = 1: the old behaviour, the first window only (truncation)
DEFAULT_MAX_WINDOWS = 8  # 8 x 510 tokens: about 16k characters of code; p99 of atcoder_dev is 11k
CHARS_PER_TOKEN = 32  # text kept per window token before tokenising a truncated snippet (code: ~3-4)


@dataclass
class Windowed:
    """Windows of token ids (``ids``: c lists, special tokens included), the snippet each belongs to
    (``owner``: c ints in 0..n-1) and its content-token count (``weight``: c ints)."""

    ids: list[list[int]]
    owner: list[int]
    weight: list[int]
    prompt_tokens: int = 0  # leading tokens of every window that are the prompt (special tokens included)


def special_template(tokenizer) -> tuple[list[int], list[int]]:
    """The special token ids the tokenizer puts before and after one sequence (BERT: [CLS] / [SEP]),
    read off a tokenization of a probe word (transformers 5 tokenizers have no public method for it)."""
    plain = list(tokenizer("x", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("x", add_special_tokens=True)["input_ids"])
    for start in range(len(full) - len(plain) + 1):
        if full[start:start + len(plain)] == plain:
            return full[:start], full[start + len(plain):]
    raise ConfigError("cannot tell the tokenizer's special tokens apart from the text")


def window_starts(total: int, width: int, max_windows: int | None) -> list[tuple[int, int]]:
    """(start, end) of the windows covering ``total`` content tokens with windows of at most ``width``."""
    if width < 1:
        raise ConfigError("window width must be >= 1")
    if total <= width:
        return [(0, total)]
    k = math.ceil(total / width)
    size = math.ceil(total / k)  # near-equal windows, each <= width
    spans = [(s, min(s + size, total)) for s in range(0, total, size)]
    if max_windows is not None and len(spans) > max_windows:
        if max_windows == 1:
            return [(0, width)]
        # max_windows full windows spread evenly from the first to the last token
        last = total - width
        starts = [round(i * last / (max_windows - 1)) for i in range(max_windows)]
        return [(s, s + width) for s in starts]
    return spans


def window_ids(backbone, codes: Sequence[str], max_windows: int | None = DEFAULT_MAX_WINDOWS,
               prompt: str = "") -> Windowed:
    """Tokenize ``codes`` once (no truncation) and cut each into windows of ``backbone.max_length``.
    ``max_windows=1`` reproduces truncation to the first window exactly. ``prompt``: text put before
    each snippet (tokenized with it, as sentence-transformers does) and repeated in every window.
    ``backbone`` needs only ``tokenizer`` (a transformers tokenizer, or one called the same way),
    ``max_length`` and ``preprocess``."""
    tok = backbone.tokenizer
    prefix, suffix = special_template(tok)
    lead = list(tok(prompt, add_special_tokens=False)["input_ids"]) if prompt else []
    width = backbone.max_length - len(prefix) - len(suffix) - len(lead)
    if width < 1:
        raise ConfigError(f"the prompt takes {len(lead)} tokens, leaving none of the {backbone.max_length}-token "
                          "window for the code")
    with _quiet(tok):  # "sequence longer than the model's maximum" is what we handle here
        texts = [prompt + backbone.preprocess(c) for c in codes]
        if max_windows == TRUNCATE:
            ids = _first_window_ids(tok, texts, width)
        else:
            ids = tok(texts, add_special_tokens=False, truncation=False, padding=False)["input_ids"]
    out = Windowed([], [], [], len(prefix) + len(lead))
    for n, content in enumerate(ids):
        content = list(content)
        head = lead if content[:len(lead)] == lead else []  # else: the prompt merged into the code's tokens
        content = content[len(head):]
        for start, end in window_starts(len(content), width, max_windows):
            out.ids.append(prefix + head + content[start:end] + suffix)
            out.owner.append(n)
            out.weight.append(max(1, end - start))
    return out


@contextlib.contextmanager
def _quiet(tok) -> Iterator[None]:
    """transformers' warnings off while a transformers tokenizer runs (others have none to silence)."""
    if not type(tok).__module__.startswith("transformers"):
        yield
        return
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)


def _cut(text: str, budget: int) -> str | None:
    """``text`` cut before the first whitespace run that starts in ``[budget / 2, budget]`` (so the
    last word is whole and every token before the cut is the same as in the whole text), or None."""
    at = max(text.rfind(" ", budget // 2, budget), text.rfind("\n", budget // 2, budget))
    if at <= 0:
        return None
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return text[:at] if at > budget // 4 else None


def _first_window_ids(tok, texts: list[str], width: int) -> list[list[int]]:
    """Content token ids of ``texts`` as far as the first window needs them: a long text is cut at a
    whitespace boundary after about ``width * CHARS_PER_TOKEN`` characters before it is tokenised
    (5 MB of code would otherwise take gigabytes for 512 tokens), and cut later (or kept whole) when
    the cut part gives fewer than ``width`` tokens. The first window is thus exactly as without a cut."""
    budget = width * CHARS_PER_TOKEN

    def part(text: str, limit: int) -> str:
        return (_cut(text, limit) or text) if len(text) > limit else text

    ids = [list(x) for x in tok([part(t, budget) for t in texts], add_special_tokens=False,
                                truncation=False, padding=False)["input_ids"]]
    for n, text in enumerate(texts):
        limit = budget
        while len(ids[n]) < width and len(text) > limit:  # the cut part was too short: cut later
            limit *= 4
            ids[n] = list(tok(part(text, limit), add_special_tokens=False, truncation=False)["input_ids"])
    return ids


def pool_windows(emb: torch.Tensor, windowed: Windowed, n: int) -> torch.Tensor:
    """Weighted mean of the window vectors per snippet. Args: emb: (c, d). Returns (n, d)."""
    import torch

    owner = torch.tensor(windowed.owner, dtype=torch.long)
    weight = torch.tensor(windowed.weight, dtype=emb.dtype)
    out = torch.zeros(n, emb.shape[1], dtype=emb.dtype)
    out.index_add_(0, owner, emb * weight[:, None])
    total = torch.zeros(n, dtype=emb.dtype).index_add_(0, owner, weight)
    return out / total.clamp_min(1.0)[:, None]


def check_max_windows(value: int | None, name: str = "max_windows") -> int | None:
    """``value`` when it is a whole number >= 1 or None, else ConfigError naming ``name``."""
    if value is not None and (not isinstance(value, int) or value < 1):
        raise ConfigError(f"{name} must be a whole number >= 1 (1 = truncate) or None, got {value!r}")
    return value
