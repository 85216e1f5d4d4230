"""Golden vectors of the shipped models: `default`, `default-sdtp` and `default-fast` must keep giving these numbers.

Computed with the torch engine for the shipped default of the real-code round (WiSE-FT α 0.5 backbone,
no head, view code+docs, fingerprint dc1e4bcbd50c76d9) and stored rounded to 1e-4; a change in
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
        "dims": [[-0.0271, 0.061, 0.0455, 0.0374, -0.0913, -0.0815, -0.0162, 0.043],
                 [-0.017, 0.0689, 0.0731, 0.0509, -0.1022, -0.0963, 0.002, 0.0426],
                 [0.0241, 0.0912, 0.0543, 0.0727, -0.0678, -0.0524, 0.0383, 0.0129]],
        "cosine": [[1.0, 0.8928, 0.2607], [0.8928, 1.0, 0.3708], [0.2607, 0.3708, 1.0]],
    },
    "default-sdtp": {
        "dims": [[-0.0374, 0.0546, 0.0348, 0.0355, -0.0685, -0.0912, -0.014, 0.0299],
                 [-0.017, 0.0752, 0.0678, 0.0512, -0.1011, -0.1152, 0.0183, 0.0368],
                 [0.0153, 0.093, 0.0351, 0.0634, -0.0638, -0.0498, 0.0361, 0.0068]],
        "cosine": [[1.0, 0.8866, 0.2825], [0.8866, 1.0, 0.366], [0.2825, 0.366, 1.0]],
    },
    "default-fast": {  # 3 layers, 768 feed-forward neurons (round three, e3 + linear decay),
        # fingerprint 78dca68c69373bb2
        "dims": [[-0.0368, 0.0532, 0.0402, 0.0424, -0.0717, -0.0981, -0.0194, 0.0709],
                 [-0.0047, 0.0644, 0.0638, 0.0482, -0.0729, -0.1168, -0.0064, 0.0597],
                 [0.0609, 0.0658, 0.0552, 0.0778, -0.0645, -0.0373, 0.0588, 0.0234]],
        "cosine": [[1.0, 0.9208, 0.243], [0.9208, 1.0, 0.3487], [0.243, 0.3487, 1.0]],
    },
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_shipped_model_vectors(name):
    model = conba.load_model(name)
    emb = model.encode([c for _, c in CODES], languages=[lang for lang, _ in CODES])
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(emb[:, ::48], GOLDEN[name]["dims"], atol=1e-3)
    np.testing.assert_allclose(emb @ emb.T, GOLDEN[name]["cosine"], atol=1e-3)


def test_shipped_student_is_a_three_layer_copy_of_the_default():
    from conba.encoder.ffn import ffn_size

    student, default = conba.load_model("default-fast"), conba.load_model("default")
    assert student.backbone.num_layers == 3 and default.backbone.num_layers == 6
    assert ffn_size(student.backbone.model) == 768 and ffn_size(default.backbone.model) == 1536  # half as wide
    assert student.view == default.view and student.info["teacher_layers"] == [0, 2, 5]
    assert student.clone_threshold["value"] > 0 and student.threshold is not None
    emb = student.encode([c for _, c in CODES], languages=[lang for lang, _ in CODES])
    ref = default.encode([c for _, c in CODES], languages=[lang for lang, _ in CODES])
    assert np.all(np.sum(emb * ref, axis=1) > 0.9)  # it learned the default's vectors (0.92-0.96)
