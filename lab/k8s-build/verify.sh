#!/usr/bin/env bash
# Check an offline Kubernetes build (lab/k8s-build/build.sh) on the build machine:
#   1. every binary runs and reports the pinned version;
#   2. the images are exactly the ones kubeadm asks for under IMAGE_REPOSITORY;
#   3. the built containerd (own root, state and socket under a temp dir; the machine's
#      Docker/containerd is not touched) imports every image archive with the
#      io.cri-containerd.pinned=pinned label, and runs the pause image with the built
#      shim and runc until SIGTERM stops it with status 0.
# Step 3 needs root; SKIP_RUNTIME=1 skips it.
#
# Usage: lab/k8s-build/verify.sh [CACHE_DIR]   (default: build.sh --print-dir)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$HERE/versions.env"
OUT=${1:-$("$HERE/build.sh" --print-dir)}
BIN=$OUT/bin
[[ -d $BIN ]] || { echo "verify: no build at $OUT (run make lab-k8s)" >&2; exit 66; }

fails=0
ok() { printf '  ok    %s\n' "$*"; }
bad() { printf '  FAIL  %s\n' "$*"; fails=$((fails + 1)); }
expect() {  # description, expected substring, command...
  local what=$1 want=$2 got; shift 2
  got=$("$@" 2>&1 | head -n 3 | tr '\n' ' ') || true
  if [[ $got == *"$want"* ]]; then ok "$what: $got"; else bad "$what: want '$want', got '$got'"; fi
}

echo "== binaries ($BIN)"
kv=$KUBERNETES_VERSION
expect kubeadm "$kv" "$BIN/kubeadm" version -o short
expect kubelet "Kubernetes $kv" "$BIN/kubelet" --version
expect kubectl "Client Version: $kv" "$BIN/kubectl" version --client
for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
  expect "$c" "Kubernetes $kv" "$BIN/$c" --version
done
expect etcd "etcd Version: ${ETCD_VERSION#v}" "$BIN/etcd" --version
[[ -x $BIN/etcdctl ]] && expect etcdctl "etcdctl version: ${ETCD_VERSION#v}" "$BIN/etcdctl" version
expect containerd "$CONTAINERD_VERSION" "$BIN/containerd" --version
expect containerd-shim-runc-v2 "$CONTAINERD_VERSION" "$BIN/containerd-shim-runc-v2" -v
expect ctr "$CONTAINERD_VERSION" "$BIN/ctr" --version
[[ -n ${RUNC_VERSION:-} ]] && expect runc "runc version ${RUNC_VERSION#v}" "$BIN/runc" --version
expect crictl "$CRI_TOOLS_VERSION" "$BIN/crictl" --version
for p in bridge host-local loopback portmap; do
  expect "$p" "$CNI_PLUGINS_VERSION" env -i "$BIN/$p"
done
expect helm "$HELM_VERSION" "$BIN/helm" version --short
if [[ -x $BIN/coredns ]]; then expect coredns "CoreDNS-${COREDNS_VERSION#v}" "$BIN/coredns" -version
else bad "coredns: not built"; fi
expect pause "$PAUSE_VERSION" "$BIN/pause" -v

echo "== images kubeadm asks for (imageRepository $IMAGE_REPOSITORY)"
want=$("$BIN/kubeadm" config images list --image-repository "$IMAGE_REPOSITORY" \
        --kubernetes-version "$KUBERNETES_VERSION" 2>/dev/null | sort)
have=$(awk '{print $1}' "$OUT/images/images.txt" 2>/dev/null | sort -u)
for ref in $want; do
  if grep -qxF "$ref" <<<"$have"; then ok "$ref"; else bad "$ref: no image archive"; fi
done

if [[ -n ${SKIP_RUNTIME:-} ]]; then echo "== runtime check skipped"; exit $((fails > 0)); fi
if [[ $(id -u) != 0 ]]; then echo "== runtime check needs root; skipped"; exit $((fails > 0)); fi

echo "== built containerd: import, pin, run pause"
tmp=$(mktemp -d /tmp/k8s-verify.XXXXXX)
sock=$tmp/containerd.sock
ctrd_pid=
cleanup() {
  if [[ -S $sock ]]; then
    "$BIN/ctr" -a "$sock" -n k8s.io task kill -s KILL verify-pause >/dev/null 2>&1 || true
    sleep 1
    "$BIN/ctr" -a "$sock" -n k8s.io task delete verify-pause >/dev/null 2>&1 || true
    "$BIN/ctr" -a "$sock" -n k8s.io container delete verify-pause >/dev/null 2>&1 || true
  fi
  [[ -n $ctrd_pid ]] && kill "$ctrd_pid" 2>/dev/null && wait "$ctrd_pid" 2>/dev/null
  umount -R "$tmp/root" 2>/dev/null || true
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
cat >"$tmp/config.toml" <<EOF
version = 3
root = "$tmp/root"
state = "$tmp/state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$sock.debug"
[metrics]
  address = ""
EOF
PATH=$BIN:$PATH "$BIN/containerd" --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 &
ctrd_pid=$!
for _ in $(seq 60); do [[ -S $sock ]] && break; sleep 0.5; done
C=("$BIN/ctr" -a "$sock" -n k8s.io)
if ! "${C[@]}" version >/dev/null 2>&1; then
  bad "containerd did not start: $(tail -n 5 "$tmp/containerd.log")"; exit 1
fi
ok "containerd $("${C[@]}" version 2>/dev/null | awk '/Server/{s=1} s&&/Version/{print $2; exit}') started"
for f in "$OUT"/images/*.tar; do
  if out=$("${C[@]}" images import --label io.cri-containerd.pinned=pinned "$f" 2>&1); then
    ok "import $(basename "$f")"
  else bad "import $(basename "$f"): $out"; fi
done
pinned=$("${C[@]}" images ls 2>/dev/null | grep -c 'io.cri-containerd.pinned=pinned' || true)
n=$(ls "$OUT"/images/*.tar | wc -l)
if [[ $pinned == "$n" ]]; then ok "$pinned images labelled io.cri-containerd.pinned=pinned"
else bad "$pinned of $n images pinned"; fi

pause=$IMAGE_REPOSITORY/pause:$PAUSE_VERSION
if "${C[@]}" run -d --runc-binary "$BIN/runc" "$pause" verify-pause >"$tmp/run.log" 2>&1; then
  sleep 2
  st=$("${C[@]}" task ls 2>/dev/null | awk '$1=="verify-pause"{print $3}')
  [[ $st == RUNNING ]] && ok "pause runs under the built shim + runc" || bad "pause task is '$st'"
  "${C[@]}" task kill -s TERM verify-pause >/dev/null 2>&1
  for _ in $(seq 20); do
    st=$("${C[@]}" task ls 2>/dev/null | awk '$1=="verify-pause"{print $3}'); [[ $st == STOPPED ]] && break; sleep 0.5
  done
  code=$("${C[@]}" task delete verify-pause 2>/dev/null | awk '/exit/{print $NF}' || true)
  [[ $st == STOPPED ]] && ok "pause stopped on SIGTERM${code:+ (status $code)}" || bad "pause did not stop on SIGTERM ($st)"
else
  bad "ctr run pause: $(tail -n 5 "$tmp/run.log")"
fi
echo "== $fails failure(s)"
exit $((fails > 0))
