#!/usr/bin/env bash
# Stage what benchmarks/h200_serving.sh needs on a GPU machine with no network, in parts the
# device tool carries (at most 64 MiB a trip, the working tree included): the wheels of
# benchmarks/h200-serving-requirements.txt (vLLM 0.24.0's CUDA build and what the machine's
# /opt/torch/.venv lacks of its requirements and of the load tool's) and the acceptance test's
# MiniLM (lab/images/fetch-acceptance-assets.sh), as one tar split into .gpurack/h200-carry/NN/,
# each folder one part and the tar's sha256.
#
# Usage: benchmarks/h200_serving_stage.sh      (PART=56M; VLLM_WHEELS: a folder that may hold
#                                               the 266 MiB vllm wheel already downloaded)
set -euo pipefail
cd "$(dirname "$0")/.."
PART=${PART:-56M}
bundle=.gpurack/h200-bundle
carry=.gpurack/h200-carry
model=${GPURACK_CACHE:-$HOME/.cache/gpurack}/acceptance/model/all-MiniLM-L6-v2
[[ -s $model/model.safetensors ]] || lab/images/fetch-acceptance-assets.sh
mkdir -p "$bundle/stage/wheels" "$bundle/stage/model"
for w in "${VLLM_WHEELS:-/tmp/vllm-gpu-wheels}"/vllm-0.24.0-*.whl; do
  [[ -e $w && ! -e $bundle/stage/wheels/${w##*/} ]] && cp "$w" "$bundle/stage/wheels/"
done
platforms=()
for n in 5 17 24 26 27 28 31 34 35; do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
.venv/bin/pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d "$bundle/stage/wheels" -r benchmarks/h200-serving-requirements.txt
rm -rf "$bundle/stage/model/all-MiniLM-L6-v2" && cp -r "$model" "$bundle/stage/model/"
tar -C "$bundle/stage" -cf "$bundle/h200-bundle.tar" wheels model
sum=$(sha256sum "$bundle/h200-bundle.tar" | cut -d' ' -f1)
rm -rf "$carry" && mkdir -p "$carry"
split -b "$PART" -d -a 2 "$bundle/h200-bundle.tar" "$carry/h200-bundle.tar.part-"
for p in "$carry"/h200-bundle.tar.part-*; do
  n=${p##*-}; mkdir "$carry/$n" && mv "$p" "$carry/$n/" && echo "$sum  h200-bundle.tar" >"$carry/$n/h200-bundle.tar.sha256"
done
rm "$bundle/h200-bundle.tar"
du -sh "$bundle/stage/wheels" "$bundle/stage/model" "$carry"/*
