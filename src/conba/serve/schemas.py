"""Request and response bodies of the ``conba serve`` API (they also make its OpenAPI schema).

Requests forbid unknown fields, so nothing a client sends is silently ignored, and no field names
a file: the server only ever reads the code it is sent and its own index.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from conba.mapping.config import DEFAULT_MARGIN
from conba.text import check_unicode


def _text(value: str) -> str:
    """Valid Unicode only (a JSON ``\\udcff`` escape gives a lone surrogate, which no tokenizer takes),
    without a leading byte-order mark (as files are read)."""
    check_unicode(value)
    return value.removeprefix("\ufeff")


Text = Annotated[str, AfterValidator(_text)]


class _Request(BaseModel):
    """Unknown fields are refused; types are strict (``"5"`` or ``true`` is no ``k``)."""

    model_config = ConfigDict(extra="forbid", strict=True)


GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
# marked in the OpenAPI schema; conba.serve.deprecations answers its use
DEPRECATED: dict[str, Any] = {"deprecated": True}


class SearchRequest(_Request):
    code: Text = Field(description="The query snippet: one function or a few lines of code.", examples=[GCD])
    query_language: Text | None = Field(
        None, description="The query's own language (as `conba search --query-language`): how the query is "
                          "read (input view, control code). Default: none (read as plain code).",
        examples=["python"])
    result_language: Text | None = Field(
        None, description="Only return functions in this language (as `conba search --result-language`). "
                          "Default: every language.", examples=["java"])
    language: Text | None = Field(
        None, description="Deprecated: the old name of `result_language` (it filters the results, it does not "
                          "describe the query); answered with a `warnings` entry and a `Deprecation` header.",
        examples=["java"], json_schema_extra=DEPRECATED)
    k: int = Field(10, description="Number of hits (1 to the server's limit, 100 by default).", examples=[5])
    include_code: bool = Field(False, description="Include each hit's code.", examples=[True])
    highlight: bool = Field(False, description="Include syntax-highlighted HTML of the query and of each hit.",
                            examples=[False])


class HitOut(BaseModel):
    rank: int
    score: float
    id: int | None
    file: str
    name: str
    language: str
    start_line: int
    end_line: int
    kind: str
    code: str | None = None
    html: str | None = None


class SearchResponse(BaseModel):
    hits: list[HitOut]
    query_html: str | None = None
    generation: int = Field(description="Which snapshot of the index answered (it grows on each reload).")
    warnings: list[str] | None = Field(None, description="Deprecated fields the request used, and what to send.")


class CompareRequest(_Request):
    a: Text = Field(description="First snippet.", examples=[GCD])
    b: Text = Field(description="Second snippet.",
                    examples=["int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }"])
    language_a: Text | None = Field(None, description="Language of `a` (as `conba compare --language-a`).",
                                    examples=["python"])
    language_b: Text | None = Field(None, description="Language of `b` (as `conba compare --language-b`).",
                                    examples=["java"])
    threshold: float | Text = Field("auto", description="Clone threshold in [-1, 1], or 'auto' (the model's "
                                                        "calibrated clone threshold).", examples=["auto"])


class CompareResponse(BaseModel):
    score: float
    threshold: float
    clone: bool
    languages: list[str | None]


class EncodeRequest(_Request):
    snippets: list[Text] = Field(description="Code snippets to embed (at most the server's --max-snippets).",
                                 examples=[["def add(a, b):\n    return a + b\n"]])
    languages: list[Text | None] | Text | None = Field(
        None, description="The snippets' language: one for all snippets, or one per snippet (null: unknown).",
        examples=["python"])


class EncodeResponse(BaseModel):
    dim: int
    fingerprint: str = Field(description="Identity of the model's vectors (equal fingerprints, equal vectors).")
    engine: str = Field("torch", description="Inference engine (the index's): torch, onnx (int8) or onnx-fp32.")
    vectors: list[list[float]] = Field(description="L2-normalised embeddings, one per snippet, in order.")


class CloneMember(BaseModel):
    id: int | None
    file: str
    name: str
    language: str
    start_line: int
    end_line: int
    kind: str
    code: str | None = None


class ClonePairOut(BaseModel):
    a: int | None
    b: int | None
    score: float


class CloneClassOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    class_: int = Field(alias="class")
    size: int
    languages: list[str]
    max_score: float
    mean_score: float
    members: list[CloneMember]
    pairs: list[ClonePairOut]


class ClonesResponse(BaseModel):
    threshold: float
    cross_language_only: bool
    total: int = Field(description="Clone classes in all pages.")
    offset: int
    limit: int
    classes: list[CloneClassOut]
    generation: int


class MapRequest(_Request):
    source_language: Text = Field(description="The source side: the indexed functions in this language.",
                                  examples=["java"])
    target_language: Text = Field(description="The target side: the indexed functions in this language.",
                                  examples=["python"])
    threshold: float | Text = Field("auto", description="Score a counterpart needs, or 'auto' (the model's).",
                                    examples=["auto"])
    margin: float = Field(DEFAULT_MARGIN, ge=0, le=2, description="Ambiguous when another candidate is within this.",
                          examples=[DEFAULT_MARGIN])
    only: Literal["matched", "ambiguous", "missing"] | None = Field(
        None, description="Only list the functions with this status.", examples=["missing"])
    keep_trivial: bool = Field(False, description="Also map trivial functions (near-empty, accessors, tests).",
                               examples=[False])
    include_code: bool = Field(False, description="Include each function's code.", examples=[False])


class MapResponse(BaseModel):
    summary: dict[str, Any] = Field(description="Coverage, counts per status, threshold, margin.")
    functions: list[dict[str, Any]] = Field(description="One entry per source function (as `conba map` JSONL).")
    files: list[dict[str, Any]] = Field(description="One entry per source file: its target file and coverage.")
    generation: int


# the query parameters of GET /clones, /clones/files and /report (one description and example each)
ThresholdQuery = Annotated[str, Query(description="Clone threshold: a number in [-1, 1], or 'auto' (the index's "
                                                  "calibrated clone threshold).", examples=["auto"])]
CrossLanguageQuery = Annotated[bool, Query(description="Only pairs of functions (files) in different languages.",
                                           examples=[True])]
MinLinesQuery = Annotated[int, Query(ge=1, description="Skip functions shorter than this many lines.",
                                     examples=[3])]
OffsetQuery = Annotated[int, Query(ge=0, description="Classes to skip (the page's start).", examples=[0])]
LimitQuery = Annotated[int, Query(ge=1, description="Classes per page (at most the server's page limit).",
                                  examples=[50])]
IncludeCodeQuery = Annotated[bool, Query(description="Include each member's code.", examples=[False])]
