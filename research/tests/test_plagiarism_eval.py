"""The lab's plagiarism evaluator (`conba bench plagiarism-eval`): the teacher's layout and its scores."""

from __future__ import annotations

from conba_research.bench.plagiarism_eval import evaluate, layouts
from helpers.plagiarism import JS_COPY, OTHERS, PY


def test_bench_evaluator_lays_out_folders_and_scores(tmp_path):
    """conba bench plagiarism-eval on a two-problem stand-in of plagiarism_dev: one folder per problem and
    variant (the Python submissions, one copy last), acc@1 and AUC from the command's records."""
    records = []
    for g in ("p/A", "p/B"):
        records.append({"id": f"{g}/0.py", "group": g, "language": "python", "code": PY, "role": "original"})
        records += [{"id": f"{g}/{i + 1}.py", "group": g, "language": "python", "code": code, "role": "independent"}
                    for i, code in enumerate(OTHERS)]
        for variant in ("plain", "renamed"):
            records.append({"id": f"{g}/0.py=>javascript/{variant}", "group": g, "language": "javascript",
                            "code": JS_COPY, "copy_of": f"{g}/0.py", "variant": variant})
    laid = list(layouts(records, None))
    assert [(v, len(rs), rs[-1]["language"]) for _, v, rs in laid] == [("plain", 5, "javascript"),
                                                                       ("renamed", 5, "javascript")] * 2
    summary = evaluate(records)
    assert summary["errors"] == 0
    for variant in ("plain", "renamed"):
        assert summary[variant]["n"] == 2 and summary[variant]["acc1"] == 1.0 and summary[variant]["auc"] == 1.0
    assert len(summary["similarities"]["same_language"]) == 2 * 3  # the independent Python pairs, once each
