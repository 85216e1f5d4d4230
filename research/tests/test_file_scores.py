"""conba_research.file_scores: file groups from function groups."""

from __future__ import annotations

import json


def test_file_groups_from_function_groups_keep_mutual_best_files_sharing_two(tmp_path):
    from conba_research.file_scores import file_groups_from_functions

    def group(name: str, *members: tuple[str, str]) -> str:
        return json.dumps({"group": name, "members": [{"language": lang, "file": f, "name": name, "line": 1}
                                                      for lang, f in members]}) + "\n"
    path = tmp_path / "groups.jsonl"
    path.write_text(
        group("p1", ("c", "enc.c"), ("rust", "enc.rs")) + group("p2", ("c", "enc.c"), ("rust", "enc.rs"))
        + group("p3", ("c", "enc.c"), ("rust", "util.rs"))                    # enc.c's best stays enc.rs
        + group("p4", ("c", "hash.h"), ("rust", "enc.rs")) + group("p5", ("c", "hash.h"), ("rust", "enc.rs"))
        + group("p6", ("c", "one.c"), ("rust", "one.rs"))                      # shares only one: no pair
        + group("p7", ("java", "A.java"), ("python", "a.py"), ("c", "a.c"))
        + group("p8", ("java", "A.java"), ("python", "a.py"), ("c", "a.c")))
    got = [g["files"] for g in file_groups_from_functions(path)]
    # hash.h's best is enc.rs (2), but enc.rs's best is enc.c (2, first in path order): not mutual
    assert got == [["A.java", "a.c", "a.py"], ["enc.c", "enc.rs"]]
