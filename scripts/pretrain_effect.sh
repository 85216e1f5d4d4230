#!/usr/bin/env bash
# Does a short continued pretraining of the backbone on the (unlabelled) training code change
# atcoder_dev MAP@R after the same contrastive training? Full-size version, meant for one GPU:
# < 8 min on one H100 with the defaults below.
#
#   scripts/pretrain_effect.sh RESULTS_DIR
#
# 1. conba pretrain (MLM by default) on the code of atcoder_train + mbxp_train (labels unused);
# 2. for the original and the pretrained backbone, identical `conba train` runs (for every mode in
#    $TUNES), early stopping on ~1.5k atcoder_dev records;
# 3. conba eval on the whole atcoder_dev; RESULTS_DIR/pretrain_effect.{json,png,md} collect the numbers
#    (conba experiment pretrain-report; add --docs DIR to copy them there).
#
# Environment (defaults): DATA (../shared/data), BACKBONE (default), DEVICE (cuda), OBJECTIVE (mlm),
# STEPS (1000), PT_BATCH (64), PT_LEN (256), TUNES ("none full"), EPOCHS (8), PATIENCE (3),
# CONBA (conba; e.g. "python -m conba.cli.main" without an installed entry point), PYTHON (python3).
set -euo pipefail
OUT=${1:?usage: scripts/pretrain_effect.sh RESULTS_DIR}
DATA=${DATA:-../shared/data}
BACKBONE=${BACKBONE:-default}
DEVICE=${DEVICE:-cuda}
OBJECTIVE=${OBJECTIVE:-mlm}
STEPS=${STEPS:-1000}
PT_BATCH=${PT_BATCH:-64}
PT_LEN=${PT_LEN:-256}
TUNES=${TUNES:-"none full"}
EPOCHS=${EPOCHS:-8}
PATIENCE=${PATIENCE:-3}
CONBA=${CONBA:-conba}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export CONBA_CACHE="$OUT/cache" PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
TRAIN=("$DATA/atcoder_train.jsonl" "$DATA/mbxp_train.jsonl")
DEV="$DATA/atcoder_dev.jsonl"
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/log.txt" >&2; }
stamp() { date +%s; }

t0=$(stamp)
log "pretrain $OBJECTIVE: $STEPS steps x $PT_BATCH windows of <= $PT_LEN tokens"
$CONBA pretrain "${TRAIN[@]}" -o "$OUT/backbone-$OBJECTIVE" --backbone "$BACKBONE" --objective "$OBJECTIVE" \
  --steps "$STEPS" -b "$PT_BATCH" --max-length "$PT_LEN" --device "$DEVICE" --no-progress >"$OUT/pretrain.json"

for tune in $TUNES; do
  for variant in original pretrained; do
    bb="$BACKBONE"; [ "$variant" = pretrained ] && bb="$OUT/backbone-$OBJECTIVE"
    name="$tune-$variant"
    t1=$(stamp)
    log "train $name (backbone $bb, --tune $tune)"
    $CONBA train "${TRAIN[@]}" -D "$DEV" --dev-limit 1500 -o "$OUT/model-$name" --backbone "$bb" \
      --head conba --control-codes --tune "$tune" -P 32 -K 4 -e "$EPOCHS" --patience "$PATIENCE" \
      --device "$DEVICE" --no-progress 2>>"$OUT/log.txt"
    log "eval $name on all of atcoder_dev"
    $CONBA eval "$DEV" -m "$OUT/model-$name" -j "$OUT/eval-$name.json" --device "$DEVICE" --no-tfidf \
      -b 128 --no-progress >"$OUT/eval-$name.txt"
    echo "$(( $(stamp) - t1 ))" >"$OUT/seconds-$name.txt"
  done
done

$PYTHON -m conba_research.pretrain_report "$OUT" \
  --title "Continued $OBJECTIVE pretraining before contrastive training (full size, $DEVICE)"
log "done in $(( $(stamp) - t0 ))s; results in $OUT/pretrain_effect.json"
