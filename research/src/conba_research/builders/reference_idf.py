"""Write the lexical channel's reference document frequencies (src/conba/lexical/reference_idf.json).

``conba compare`` (and ``/compare``) score two snippets with no index around them, so the lexical
cosine needs document frequencies from elsewhere: these, counted over the training files (never
the dev or evaluation sets). Terms seen in one document only are left out (they get the largest idf,
as unseen terms do).

    conba experiment reference-idf ../shared/data/atcoder_train.jsonl ../shared/data/mbxp_train.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import conba.lexical
from conba.data import load_records
from conba.lexical import LexicalVectorizer
from conba.lexical.vectorizer import IdfTable
from conba.utils.io import write_text_atomic

OUT = Path(conba.lexical.__file__).parent / "reference_idf.json"  # the installed package's copy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path, help="grouped JSONL training files")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args()
    codes = [r.code for f in args.files for r in load_records(f)]
    table = IdfTable.fit(LexicalVectorizer().term_frequencies(codes))
    keep = table.df >= 2
    obj = {"n_docs": table.n_docs, "source": [f.name for f in args.files],
           "columns": table.columns[keep].tolist(), "df": table.df[keep].tolist()}
    write_text_atomic(args.output, json.dumps(obj, separators=(",", ":")) + "\n")
    print(f"{args.output}: {int(keep.sum())} terms from {table.n_docs} snippets")


if __name__ == "__main__":
    main()
