#!/usr/bin/env bash
# The lab's model server code (workloads/serving's launcher, then vLLM) on a real GPU machine
# with no network: reassemble the bundle benchmarks/h200_serving_stage.sh made, install its
# wheels on top of the machine's PyTorch, check that vLLM's CUDA kernels load, then time a cold
# and a warm start and load the server at each concurrency (benchmarks/h200_serving.py), first
# with the lab's runtime args (float32), then the same with float16; last, one more start with the
# lab's args after compileall (the image carries no bytecode: how much of a start is compiling
# Python). Writes OUT_DIR/h200-serving.json and the server logs.
#
# Usage: benchmarks/h200_serving.sh PARTS_DIR OUT_DIR
#   PARTS_DIR holds h200-bundle.tar.part-* and h200-bundle.tar.sha256.
#   PY: the Python with torch 2.11.0 (default /opt/torch/.venv/bin/python); WORK: scratch.
# vLLM 0.24.0 pins torch==2.11.0 and its family: the wheels go in with --no-deps into a --target
# folder on PYTHONPATH, so that Python's own torch, triton and the rest are used unchanged (a
# venv made with --system-site-packages from a venv's Python would see the base interpreter's
# packages, not the venv's).
set -uo pipefail
parts=${1:?usage: $0 PARTS_DIR OUT_DIR}
out=${2:?usage: $0 PARTS_DIR OUT_DIR}
cd "$(dirname "$0")/.."
PY=${PY:-/opt/torch/.venv/bin/python}
work=${WORK:-/tmp/h200-serving}
LOADS=${LOADS:-1,8} REQUESTS=${REQUESTS:-2000} SECONDS_EACH=${SECONDS_EACH:-60}
# The lab's args for MiniLM (lab/tests/inference_checks.py EMBED_ARGS); the launcher adds
# --enforce-eager itself (no CUDA graphs, no torch.compile).
LAB_ARGS=(--runner pooling --convert embed --max-model-len 256 --dtype float32)
# NVLink multicast stays off: on shared hosts it can take every GPU out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1
# flashinfer is not carried (see benchmarks/h200-serving-requirements.txt), and vLLM 0.24's
# sampler, built even for a pooling model, imports it unless this is 0 (it then samples natively).
export VLLM_USE_FLASHINFER_SAMPLER=0
mkdir -p "$out" "$work"
step() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%T)"; }
now() { date +%s.%N; }

step "reassemble"
t0=$(now)
cat "$parts"/h200-bundle.tar.part-* >"$work/bundle.tar"
want=$(cut -d' ' -f1 "$parts/h200-bundle.tar.sha256")
got=$(sha256sum "$work/bundle.tar" | cut -d' ' -f1)
[[ $want == "$got" ]] || { echo "bundle.tar: sha256 $got, want $want (a part missing?)"; ls -l "$parts"; exit 1; }
rm -rf "$work/bundle" && mkdir -p "$work/bundle" && tar -xf "$work/bundle.tar" -C "$work/bundle" && rm "$work/bundle.tar"
t_reassemble=$(python3 -c "print(round($(now) - $t0, 1))")
du -sh "$work/bundle"/*

step "install (pip --no-index --no-deps --target)"
t0=$(now)
rm -rf "$work/site"
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
  --target "$work/site" "$work"/bundle/wheels/*.whl || exit 1
t_install=$(python3 -c "print(round($(now) - $t0, 1))")
export PYTHONPATH=$work/site
du -sh "$work/site"

step "import vllm and its CUDA kernels"
# No bytecode written here either: the starts below compile vLLM's modules as a new pod does.
PYTHONDONTWRITEBYTECODE=1 "$PY" - >"$work/versions.json" <<'PY' || exit 1
import json, time
t = time.time()
import torch, vllm
import vllm._C_stable_libtorch, vllm._moe_C_stable_libtorch  # noqa: F401  # the torch ABI check
from vllm.vllm_flash_attn.flash_attn_interface import FA2_AVAILABLE, FA3_AVAILABLE
print(json.dumps({
    "vllm": vllm.__version__, "torch": torch.__version__, "cuda": torch.version.cuda,
    "gpu": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
    "fa2": FA2_AVAILABLE, "fa3": FA3_AVAILABLE, "import_s": round(time.time() - t, 1),
}))
PY
cat "$work/versions.json"

model=$work/bundle/model/all-MiniLM-L6-v2
common=(--model-dir "$model" --work "$work" --loads "$LOADS" --requests "$REQUESTS" --seconds "$SECONDS_EACH")
step "the lab's args: cold start, warm start, loads ${LOADS}"
"$PY" benchmarks/h200_serving.py "${common[@]}" --label lab-args --starts cold,warm --out "$work/lab-args.json" \
  -- "${LAB_ARGS[@]}"
step "float16: warm start, loads ${LOADS}"
"$PY" benchmarks/h200_serving.py "${common[@]}" --label float16 --starts warm --out "$work/float16.json" \
  -- "${LAB_ARGS[@]:0:6}" --dtype float16
step "the lab's args with bytecode (compileall first): warm start"
t0=$(now)
"$PY" -m compileall -q -j 0 "$work/site" >/dev/null
t_compile=$(python3 -c "print(round($(now) - $t0, 1))")
"$PY" benchmarks/h200_serving.py "${common[@]}" --label bytecode --starts warm --loads "" --out "$work/bytecode.json" \
  -- "${LAB_ARGS[@]}"

step "figures"
"$PY" - "$work" "$out/h200-serving.json" "$t_reassemble" "$t_install" "$t_compile" <<'PY'
import json, pathlib, subprocess, sys
work, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
runs = [json.loads(p.read_text()) for p in (work / "lab-args.json", work / "float16.json", work / "bytecode.json") if p.exists()]
doc = {"date": "2026-12-04", "command": "benchmarks/h200_serving.sh PARTS_DIR OUT_DIR",
       "machine": {"nvidia_smi": smi, **json.loads((work / "versions.json").read_text())},
       "reassemble_s": float(sys.argv[3]), "install_s": float(sys.argv[4]),
       "compileall_s": float(sys.argv[5]), "runs": runs}
dest.write_text(json.dumps(doc, indent=1) + "\n")
print(json.dumps(doc, indent=1))
PY
cp "$work"/server-*.log "$out"/ 2>/dev/null
true
