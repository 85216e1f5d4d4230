"""Header robustness: one shared, realistic header (license, imports/includes, contest macros) put in
front of every snippet of a language; MAP@R with and without it, per model and input view.

    conba experiment header-robustness --model default --view code --view raw \
        --data ../shared/data/mbxp_dev.jsonl --data ../shared/data/atcoder_dev.jsonl [--limit 2000]

Prints one line per (data, view): MAP@R clean, MAP@R with headers, the difference in points, and the
mean header length in lines. The acceptance bar of issue 10 is a loss of at most 1 point.
"""

from __future__ import annotations

import argparse
import json
import time

LICENSE = """/*
 * Copyright (c) 2024 The Project Authors. All rights reserved.
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS.
 */
"""
HASH_LICENSE = "".join("# " + line.lstrip("/* ").rstrip() + "\n" for line in LICENSE.splitlines()[1:-1])

HEADERS: dict[str, str] = {
    "python": HASH_LICENSE + "import sys\nimport os\nimport math\nimport heapq\nimport bisect\n"
              "from collections import defaultdict, deque, Counter\nfrom itertools import accumulate, permutations\n"
              "from functools import lru_cache, reduce\nfrom typing import List, Tuple, Optional\n",
    "java": LICENSE + "package com.example.solutions;\n\nimport java.io.*;\nimport java.util.*;\n"
            "import java.util.stream.Collectors;\nimport java.util.function.Function;\nimport java.math.BigInteger;\n",
    "cpp": LICENSE + "#include <bits/stdc++.h>\n#include <iostream>\n#include <vector>\n#include <algorithm>\n"
           "#include <string>\n#include <map>\n#include <set>\n#include <queue>\nusing namespace std;\n"
           "#define rep(i, n) for (int i = 0; i < (int)(n); i++)\n#define all(x) (x).begin(), (x).end()\n"
           "#define INF 1000000007\ntypedef pair<int, int> pii;\ntypedef vector<int> vi;\n",
    "c": LICENSE + "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n"
         "#include <stdbool.h>\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
         "#define MOD 1000000007\ntypedef unsigned long long ull;\n",
    "csharp": LICENSE + "using System;\nusing System.Collections.Generic;\nusing System.Linq;\nusing System.Text;\n"
              "using System.IO;\nusing static System.Math;\n",
    "javascript": LICENSE + "'use strict';\nconst fs = require('fs');\nconst path = require('path');\n"
                  "const assert = require('assert');\nimport { strict as strictAssert } from 'assert';\n",
    "typescript": LICENSE + "import * as fs from 'fs';\nimport { readFileSync } from 'fs';\n"
                  "import type { Buffer } from 'buffer';\nimport assert from 'assert';\n",
    "kotlin": LICENSE + "package com.example.solutions\n\nimport java.io.*\nimport java.util.*\nimport kotlin.math.*\n"
              "import kotlin.collections.ArrayList\n",
    "php": "<?php\n" + LICENSE + "namespace App\\Solutions;\n\nuse InvalidArgumentException;\nuse App\\Util\\Helpers;\n"
           "require_once __DIR__ . '/vendor/autoload.php';\n",
    "ruby": HASH_LICENSE + "require 'set'\nrequire 'prime'\nrequire 'json'\nrequire_relative 'helpers'\n",
}


def with_header(code: str, language: str) -> str:
    header = HEADERS.get(language, "")
    if language == "php" and code.lstrip().startswith("<?php"):
        code = code.lstrip()[len("<?php"):].lstrip("\n")
    return header + "\n" + code if header else code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="default")
    ap.add_argument("--view", action="append", default=None, help="input view(s) to test (default: code)")
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--limit", type=int, default=0, help="about N records (whole groups, seeded)")
    ap.add_argument("--max-windows", "--max-chunks", dest="max_windows", type=int, default=None)
    ap.add_argument("--json-out", default=None, help="also write the rows to this JSON file")
    ap.add_argument("--lexical-weight", type=float, default=None,
                    help="score with the fused lexical + dense score at this weight (default: the model's)")
    args = ap.parse_args()

    import conba
    from conba.data import load_records, subset_groups
    from conba.eval.metrics import cross_language_retrieval, embedding_similarity
    from conba.lexical import LexicalVectorizer, fuse

    model = conba.load_model(args.model)
    weight = model.lexical_weight if args.lexical_weight is None else args.lexical_weight
    rows = []
    for path in args.data:
        recs = subset_groups(load_records(path), args.limit, 0)
        langs = [r.language for r in recs]
        groups = [r.group for r in recs]
        for view in args.view or ["code"]:
            scores = {}
            for variant in ("clean", "header"):
                codes = [r.code if variant == "clean" else with_header(r.code, r.language) for r in recs]
                t0 = time.time()
                emb = model.encode(codes, languages=langs, view=view, max_windows=args.max_windows)
                sim = embedding_similarity(emb)
                if weight:  # the lexical vectors read the text as given (header included), idf of the set
                    lex = LexicalVectorizer().vectors(codes)
                    sim = fuse(sim, (lex @ lex.T).toarray(), weight)
                res = cross_language_retrieval(sim, groups, langs)
                scores[variant] = res["mean"]["map_at_r"]
                scores[variant + "_seconds"] = round(time.time() - t0, 1)
            lines = sum(HEADERS[lang].count("\n") for lang in set(langs) if lang in HEADERS) / max(
                1, len({lang for lang in langs if lang in HEADERS}))
            row = {"data": path, "n": len(recs), "model": args.model, "view": view, "lexical_weight": weight,
                   **scores,
                   "delta_points": round(100 * (scores["header"] - scores["clean"]), 2),
                   "header_lines_mean": round(lines, 1)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json_out:
        from conba.utils.io import write_json_atomic

        write_json_atomic(args.json_out, {"rows": rows})


if __name__ == "__main__":
    main()
