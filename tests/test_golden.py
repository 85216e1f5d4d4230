"""Golden vectors of the shipped models: `default` and `default-sdtp` must keep giving these numbers.

Computed once with the torch engine (2026-11, conba 0.1.0) and stored rounded to 1e-4; a change in
tokenization, the layer loop, pooling, the head or the pruner that moves any of them by more than
1e-3 fails here. Dimensions 0, 48, ..., 336 of each vector, and the cosine matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

import conba

pytestmark = pytest.mark.slow  # loads the shipped 22M-parameter model

CODES = [
    ("python", "def add(a, b):\n    return a + b\n"),
    ("java", "static int add(int a, int b) {\n    return a + b;\n}"),
    ("cpp", "#include <vector>\nlong long total(const std::vector<long long>& xs) {\n    long long s = 0;\n"
            "    for (size_t i = 0; i < xs.size(); ++i) {\n        if (xs[i] % 2 == 0) s += xs[i] * xs[i];\n"
            "        else s -= xs[i];\n    }\n    return s;\n}\n"
            "int main() {\n    std::vector<long long> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};\n"
            "    return static_cast<int>(total(v) % 256);\n}\n"),
]
GOLDEN = {
    "default": {
        "dims": [[-0.0235, 0.083, 0.0064, 0.0065, -0.0817, -0.0184, 0.0058, 0.0379],
                 [-0.0165, 0.0909, 0.0484, 0.0146, -0.0792, -0.0378, 0.0267, 0.0408],
                 [0.0776, 0.0575, 0.1179, 0.0652, -0.0146, -0.0612, 0.0778, -0.0088]],
        "cosine": [[1.0, 0.9641, 0.1667], [0.9641, 1.0, 0.298], [0.1667, 0.298, 1.0]],
    },
    "default-sdtp": {
        "dims": [[-0.021, 0.0783, 0.0155, 0.0068, -0.0917, -0.0137, 0.0126, 0.0397],
                 [-0.0098, 0.0882, 0.0476, 0.0196, -0.0809, -0.04, 0.0327, 0.0414],
                 [0.075, 0.0622, 0.1034, 0.0604, -0.0113, -0.064, 0.0733, -0.0105]],
        "cosine": [[1.0, 0.9701, 0.1943], [0.9701, 1.0, 0.2763], [0.1943, 0.2763, 1.0]],
    },
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_shipped_model_vectors(name):
    model = conba.load_model(name)
    emb = model.encode([c for _, c in CODES], languages=[lang for lang, _ in CODES])
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(emb[:, ::48], GOLDEN[name]["dims"], atol=1e-3)
    np.testing.assert_allclose(emb @ emb.T, GOLDEN[name]["cosine"], atol=1e-3)
