"""Request and response bodies of the ``conba serve`` API (they also make its OpenAPI schema).

Requests forbid unknown fields, so nothing a client sends is silently ignored, and no field names
a file: the server only ever reads the code it is sent and its own index.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

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


class SearchRequest(_Request):
    code: Text = Field(description="The query snippet.")
    language: Text | None = Field(None, description="Only return functions in this language.")
    query_language: Text | None = Field(None, description="Language of the query (selects its control code).")
    k: int = Field(10, description="Number of hits.")
    include_code: bool = Field(False, description="Include each hit's code.")
    highlight: bool = Field(False, description="Include syntax-highlighted HTML of the query and of each hit.")


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


class CompareRequest(_Request):
    a: Text = Field(description="First snippet.")
    b: Text = Field(description="Second snippet.")
    language_a: Text | None = None
    language_b: Text | None = None
    threshold: float | Text = Field("auto", description="Clone threshold in [-1, 1], or 'auto' (the model's).")


class CompareResponse(BaseModel):
    score: float
    threshold: float
    clone: bool
    languages: list[str | None]


class EncodeRequest(_Request):
    snippets: list[Text] = Field(description="Code snippets to embed.")
    languages: list[Text | None] | Text | None = Field(
        None, description="One language for all snippets, or one per snippet.")


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
    source_language: Text = Field(description="The source side: the indexed functions in this language.")
    target_language: Text = Field(description="The target side: the indexed functions in this language.")
    threshold: float | Text = Field("auto", description="Score a counterpart needs, or 'auto' (the model's).")
    margin: float = Field(DEFAULT_MARGIN, ge=0, le=2, description="Ambiguous when another candidate is within this.")
    only: Literal["matched", "ambiguous", "missing"] | None = Field(
        None, description="Only list the functions with this status.")
    keep_trivial: bool = Field(False, description="Also map trivial functions (near-empty, accessors, tests).")
    include_code: bool = Field(False, description="Include each function's code.")


class MapResponse(BaseModel):
    summary: dict[str, Any] = Field(description="Coverage, counts per status, threshold, margin.")
    functions: list[dict[str, Any]] = Field(description="One entry per source function (as `conba map` JSONL).")
    files: list[dict[str, Any]] = Field(description="One entry per source file: its target file and coverage.")
    generation: int
