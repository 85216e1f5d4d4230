"""A snippet's vector does not depend on what else is in its batch, on every engine (bit for bit), so a
sharded index and a single index of the same code hold the same vectors and answer the same top-10."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from helpers import write_tree

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

SNIPPET = "def add(a, b):\n    return a + b\n"
SAME_LENGTH = ["def add(x, y):\n    return x + y\n", "def max(a, b):\n    return a + b\n"]
SHORT = ["x = 1", "print(3)"]
LONG = ["def g(xs):\n" + "    total = 0\n    for x in xs:\n        total += x * x\n" * 6 + "    return total\n",
        "def h(n):\n    if n < 2:\n        return n\n    return h(n - 1) + h(n - 2)\n"]


@pytest.fixture(scope="module")
def model(tiny_backbone, tmp_path_factory):
    import os

    from conba.model import ConbaModel

    os.environ["CONBA_CACHE"] = str(tmp_path_factory.mktemp("cache"))  # the session fixture restores it
    return ConbaModel.create(str(tiny_backbone), max_length=64)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["torch", "onnx-fp32", "onnx"])
def test_a_snippet_has_one_vector_whatever_its_batch(model, engine):
    lengths = model.backbone.token_lengths([SNIPPET, *SAME_LENGTH])
    assert len(set(lengths)) == 1  # neighbours of the same length share its batch
    alone = model.encode([SNIPPET], engine=engine)[0]
    for batch, batch_size in [([SNIPPET, *SAME_LENGTH], 32), ([*SAME_LENGTH, SNIPPET], 2), ([*SHORT, SNIPPET], 32),
                              ([*LONG, SNIPPET, *SHORT], 32), ([*LONG, *SAME_LENGTH, SNIPPET, *SHORT], 3)]:
        got = model.encode(batch, engine=engine, batch_size=batch_size)[batch.index(SNIPPET)]
        assert np.array_equal(got, alone), (engine, batch, float(np.abs(got - alone).max()))


def _functions(n_files: int = 30, per_file: int = 10) -> dict[str, str]:
    """A few hundred small functions of varied length (so batches mix lengths)."""
    files = {}
    for f in range(n_files):
        body = []
        for i in range(per_file):
            extra = "".join(f"    y{j} = x * {j + i} - {f}\n" for j in range((f + i) % 7))
            body.append(f"def f{f}_{i}(x):\n{extra}    return x * {f * per_file + i} + len('m{f}')\n\n")
        files[f"pkg{f % 3}/m{f}.py"] = "".join(body)
    return files


@pytest.mark.slow
def test_a_sharded_and_a_single_index_answer_the_same_top10(tmp_path, tiny_model):
    proj = write_tree(tmp_path / "proj", _functions())
    sharded, single = tmp_path / "sh", tmp_path / "one"
    for extra in (["--shards", "3", "--index", str(sharded)], ["--index", str(single)]):
        res = CliRunner().invoke(cli, ["index", str(proj), "-m", tiny_model, "--engine", "onnx", *extra])
        assert res.exit_code == 0, res.output
    for query in ("def q(x):\n    return x * 12 + len('m1')\n", "def r(x):\n    y1 = x * 3 - 4\n    return y1\n",
                  "def s(x):\n    return x\n"):
        answers = []
        for index in (sharded, single):
            res = CliRunner().invoke(cli, ["search", "--code", query, "-k", "10", "--index", str(index)])
            assert res.exit_code == 0, res.output
            answers.append([(d["name"], d["score"]) for d in map(json.loads, res.output.splitlines())])
        assert answers[0] == answers[1] and len(answers[0]) == 10
