"""`conba serve` encodes search queries with the model's query prompt (documents with its document prompt),
in encode calls of their own, as `conba search` does; a model without a query prompt batches as before."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from conba.serve.batching import EncodeBatcher


def test_queries_and_documents_go_to_their_own_encoders():
    calls: list[tuple[str, list[str]]] = []

    def docs(codes, languages):
        calls.append(("doc", list(codes)))
        return np.zeros((len(codes), 2), dtype=np.float32)

    def queries(codes, languages):
        calls.append(("query", list(codes)))
        return np.ones((len(codes), 2), dtype=np.float32)

    async def main(encode_query):
        b = EncodeBatcher(docs, workers=1, max_batch=64, encode_query=encode_query)
        await b.start()
        try:
            return await asyncio.gather(b.encode(["a"], [""]), b.encode(["q"], [""], query=True),
                                        b.encode(["b"], [""]))
        finally:
            await b.stop()

    a, q, b = asyncio.run(main(queries))
    assert a.tolist() == [[0, 0]] and b.tolist() == [[0, 0]] and q.tolist() == [[1, 1]]
    assert ("query", ["q"]) in calls and all(kind == "doc" for kind, codes in calls if "q" not in codes)
    calls.clear()
    a, q, b = asyncio.run(main(None))  # no query prompt: a query is encoded as a document
    assert q.tolist() == [[0, 0]] and {kind for kind, _ in calls} == {"doc"}


@pytest.mark.slow
def test_serve_search_uses_the_query_prompt(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    import conba
    from conba.encoder.backbone import embedded_model_path
    from conba.index import Index
    from conba.serve import create_app
    from helpers import write_tree

    tok = AutoTokenizer.from_pretrained(str(embedded_model_path()))
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(tmp_path / "hf")
    tok.save_pretrained(tmp_path / "hf")
    word = models.Transformer(str(tmp_path / "hf"), max_seq_length=64)
    prompts = {"query": "find the function that does the same as this one: ", "document": ""}
    SentenceTransformer(modules=[word, models.Pooling(32, pooling_mode="mean"), models.Normalize()], device="cpu",
                        prompts=prompts).save(str(tmp_path / "st"))
    code = "def add(a, b):\n    total = a + b\n    return total\n"
    src = write_tree(tmp_path / "src", {"m.py": code})
    with Index(tmp_path / "idx", model=str(tmp_path / "st")) as idx:
        idx.add([src], show_progress=False)
    model = conba.load_model(tmp_path / "st")
    query = "int add(int a, int b) { return a + b; }"
    stored = model.encode([code], languages=["python"])[0]
    want = float(model.encode_query([query])[0] @ stored)
    plain = float(model.encode([query])[0] @ stored)
    assert abs(want - plain) > 1e-3  # the query prompt makes a difference here
    with TestClient(create_app(tmp_path / "idx", reload_interval=0)) as client:
        hits = client.post("/search", json={"code": query, "k": 1}).json()["hits"]
    assert hits and abs(hits[0]["score"] - round(want, 4)) < 2e-4
