"""Clone classes in reading order, and the HTML report's folds, caps, escaping and header."""

from __future__ import annotations

import json

import pytest

from conba.clones import html_report
from conba.clones.classes import clone_classes, strongest_first_order
from conba.source.records import Unit


def _unit(i: int, language: str = "python", name: str | None = None) -> Unit:
    return Unit(f"/src/f{i}.py", name or f"f{i}", language, 1, 3, f"def f{i}():\n    return {i}\n", id=i)


# two tasks (odd ids: A, even ids: B) joined by one weak edge; ids interleave the tasks
CHAINED = {(1, 3): 0.99, (3, 5): 0.98, (1, 5): 0.97, (2, 4): 0.96, (4, 6): 0.95, (2, 5): 0.70}


def test_strongest_first_order_keeps_tasks_together():
    assert strongest_first_order(list(CHAINED), CHAINED) == [1, 3, 5, 2, 4, 6]
    assert strongest_first_order([(7, 9)], {(7, 9): 0.5}) == [7, 9]


def test_clone_classes_members_follow_the_order():
    pairs = dict(CHAINED)
    pairs[(10, 11)] = 0.9
    classes = clone_classes(pairs, lambda ids: {i: _unit(i) for i in ids})
    assert [[u.id for u in c.units] for c in classes] == [[1, 3, 5, 2, 4, 6], [10, 11]]
    assert [p.score for p in classes[0].pairs] == sorted(CHAINED.values(), reverse=True)


def test_html_folds_pairs_caps_cards_and_escapes(monkeypatch):
    monkeypatch.setattr(html_report, "MAX_CARDS", 4)
    pairs = {(i, j): 0.9 - 0.001 * (i + j) for i in range(1, 8) for j in range(i + 1, 8)}  # 21 pairs
    units = {i: _unit(i, "java" if i % 2 else "python", "Box.<init>" if i == 1 else None) for i in range(1, 8)}
    classes = clone_classes(pairs, lambda ids: {i: units[i] for i in ids})
    page = html_report.render_html(classes, index="idx", model="m (abc)", threshold=0.75, cross_language_only=True)
    shown = html_report.SHOWN_PAIR_ROWS
    assert page.count('<td class="score') == 21
    assert f"<summary>{21 - shown} more pairs</summary>" in page
    assert page.count('<div class="card">') == 4 and "... 3 more functions" in page
    assert "Box.&lt;init&gt;" in page and "Box.<init>" not in page
    assert "cross-language pairs only · threshold 0.750 · index idx · model m (abc)" in page
    assert "<script" not in page


def test_html_caps_classes(monkeypatch):
    monkeypatch.setattr(html_report, "MAX_CLASSES", 2)
    pairs = {(2 * i, 2 * i + 1): 0.9 for i in range(5)}
    classes = clone_classes(pairs, lambda ids: {i: _unit(i) for i in ids})
    page = html_report.render_html(classes)
    assert page.count('<section class="cls"') == 2 and "... 3 more clone classes" in page
    assert html_report.render_html([]).count("No clones found") == 1


def test_new_index_records_the_default_model_name(tmp_path, tiny_backbone, monkeypatch):
    import conba.model
    from conba.index import Index

    tiny = conba.model.ConbaModel.create(str(tiny_backbone), max_length=64)
    asked: list[str] = []
    monkeypatch.setattr(conba.model, "load_model", lambda name: asked.append(name) or tiny)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.py").write_text("def f(x):\n    return x + 1\n")
    with Index(tmp_path / "idx") as idx:
        idx.add([tmp_path / "p"])
        assert asked == ["default"] and idx.stats()["model"] == "default"
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["model"] == "default"


@pytest.mark.parametrize("score, level", [(0.99, "s-hi"), (0.9, "s-mid"), (0.6, "s-lo"), (-0.2, "s-lo")])
def test_score_cell_levels(score, level):
    cell = html_report.score_cell(score)
    assert f'class="score {level}"' in cell and f"{score:.3f}" in cell
