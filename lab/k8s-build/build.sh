#!/usr/bin/env bash
# Offline Kubernetes for the gpurack lab: build the Kubernetes, etcd, containerd, runc,
# crictl, CNI plugin, helm, CoreDNS, Kueue, controller-gen and kube-network-policies binaries
# (and, stamped on their own inputs, the lab's tools, its object store, versitygw, and
# prometheus-adapter and dra-example-driver; kwok on request)
# from the Go module proxy at the versions pinned in versions.env, make the images as OCI
# archives that `ctr -n k8s.io images import` loads without any registry, and write the
# Kueue and kube-network-policies install manifests (manifests.py) into <hash>/manifests/.
#
# Usage:
#   lab/k8s-build/build.sh                 build what is missing (`make lab-k8s`)
#   lab/k8s-build/build.sh --only NAME...  build only these components (e.g. kubeadm helm);
#                                            helm is built only this way (ON_REQUEST below)
#   lab/k8s-build/build.sh --update [DIR]  regenerate the wrapper go.mod/go.sum files
#                                            from versions.env (needs the module proxy)
#   lab/k8s-build/build.sh --print-dir     print the cache directory and exit
#   lab/k8s-build/build.sh --list          list the components
#
# Output: ${GPURACK_K8S_CACHE:-~/.cache/gpurack/k8s}/<hash>/ with bin/, images/,
# BUILD-TIMES.txt, MANIFEST.txt, logs/, FAILED.txt (only if something failed); `current`
# points at the newest. <hash> covers versions.env, the wrapper go.mod/go.sum files, the
# build recipe below, the pause source and the Go version (contents only, never this
# folder's path, so moving it rebuilds nothing), so a change to any of them
# builds into a fresh directory and an unchanged tree is an instant no-op. An image is
# remade (seconds) when mkimage.py, its line in IMAGES or its binary changes.
#
# GPURACK_K8S_PRUNE=1 deletes the Go module and build caches after a successful build.
# GPURACK_K8S_LOCK_WAIT=SECONDS waits that long for another build's lock (exit 75 after it)
# instead of exiting 75 at once: `make bench-scale-smoke` runs beside `make lab-k8s`.
# Good neighbour: every compile runs under `nice -n ${NICE:-15}` with -p=2, one component
# at a time. Docs: docs/lab-kubernetes.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$HERE/versions.env"

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
  export PATH=/usr/local/go/bin:$PATH
fi
command -v go >/dev/null || { echo "k8s-build: go is not installed" >&2; exit 64; }
# Host files the kube-proxy image carries (Debian 12's nftables and iptables packages).
# ipset: the kube-router image's (its firewall programs ipsets with the binary).
for host_file in /usr/sbin/nft /usr/sbin/xtables-nft-multi /usr/sbin/ipset; do
  [[ -x $host_file ]] || {
    echo "k8s-build: $host_file is missing: apt-get install nftables iptables ipset (make setup does)" >&2
    exit 64
  }
done

CACHE_ROOT=${GPURACK_K8S_CACHE:-$HOME/.cache/gpurack/k8s}
NICE=${NICE:-15}
# Go's caches live under the cache root too, so a cold build is really cold and the
# whole footprint is in one place. -modcacherw keeps `rm -rf` working on the module cache.
export GOMODCACHE=${GPURACK_K8S_GOMODCACHE:-$CACHE_ROOT/gomod}
export GOCACHE=${GPURACK_K8S_GOCACHE:-$CACHE_ROOT/go-build}
export GOFLAGS="-p=2 -trimpath -buildvcs=false -mod=readonly -modcacherw"
export GOTOOLCHAIN=local
export GOWORK=off

KUBE_MAJOR=${KUBERNETES_VERSION#v}; KUBE_MAJOR=${KUBE_MAJOR%%.*}
KUBE_MINOR=${KUBERNETES_VERSION#v*.}; KUBE_MINOR=${KUBE_MINOR%%.*}
STAGING_VERSION=v0.${KUBERNETES_VERSION#v*.}          # v1.36.3 -> v0.36.3
# helm's lint/chartutil default Kubernetes version follows the client-go it builds with
# (v0.35.x -> 1.35), as helm's Makefile does.
HELM_K8S_MAJOR=1 HELM_K8S_MINOR=0
if [[ -f $HERE/helm/go.mod ]]; then
  HELM_K8S_MINOR=$(awk '$1=="k8s.io/client-go"{split($2, v, "."); print v[2]; exit}' "$HERE/helm/go.mod")
fi

kube_ldflags() {
  local pkg out="-s -w"
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    out+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$KUBE_MAJOR"
    out+=" -X $pkg.gitMinor=$KUBE_MINOR -X $pkg.gitTreeState=clean"
    out+=" -X $pkg.buildDate=$KUBERNETES_BUILD_DATE"
    [[ -n ${KUBERNETES_GIT_COMMIT:-} ]] && out+=" -X $pkg.gitCommit=$KUBERNETES_GIT_COMMIT"
  done
  echo "$out"
}
CTRD=github.com/containerd/containerd/v2
CTRD_LDFLAGS="-s -w -X $CTRD/version.Version=$CONTAINERD_VERSION -X $CTRD/version.Package=$CTRD"
CTRD_TAGS="urfave_cli_no_docs no_btrfs netgo osusergo"

# ---------------------------------------------------------------------------------------
# The recipe: one line per component, in build order.
#   name | wrapper module dir | CGO_ENABLED | build tags | ldflags | package(s) | go build flags
# Several packages in one line build into one component (the CNI plugins). Version
# ldflags follow each upstream's Makefile; commit ids are left out (the module proxy
# does not carry them, and a made-up one would lie).
# `optional` components may fail without failing the run (they are reported, not faked).
RECIPE=(
  "pause|pause|0||-s -w -X main.version=$PAUSE_VERSION|gpurack.lab/k8s-build/pause"
  "kubeadm|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kubeadm"
  "kubelet|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kubelet"
  "kubectl|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kubectl"
  "kube-apiserver|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kube-apiserver"
  "kube-controller-manager|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kube-controller-manager"
  "kube-scheduler|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kube-scheduler"
  "kube-proxy|kubernetes|0||$(kube_ldflags)|k8s.io/kubernetes/cmd/kube-proxy"
  "etcd|etcd|0||-s -w|go.etcd.io/etcd/server/v3"
  "etcdctl|etcd|0||-s -w|go.etcd.io/etcd/etcdctl/v3"
  "containerd|containerd|0|$CTRD_TAGS|$CTRD_LDFLAGS|$CTRD/cmd/containerd"
  "containerd-shim-runc-v2|containerd|0|$CTRD_TAGS no_grpc|$CTRD_LDFLAGS|$CTRD/cmd/containerd-shim-runc-v2"
  "ctr|containerd|0|$CTRD_TAGS|$CTRD_LDFLAGS|$CTRD/cmd/ctr"
  "runc|runc|1|seccomp urfave_cli_no_docs netgo osusergo|-s -w -linkmode external -extldflags -static-pie|github.com/opencontainers/runc|-buildmode=pie"
  "crictl|cri-tools|0||-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION|sigs.k8s.io/cri-tools/cmd/crictl"
  "cni-plugins|cni-plugins|0||-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION|github.com/containernetworking/plugins/plugins/main/bridge github.com/containernetworking/plugins/plugins/ipam/host-local github.com/containernetworking/plugins/plugins/main/loopback github.com/containernetworking/plugins/plugins/meta/portmap"
  "helm|helm|0||-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$HELM_K8S_MAJOR -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$HELM_K8S_MAJOR -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR|helm.sh/helm/v3/cmd/helm"
  "coredns|coredns|0||-s -w|github.com/coredns/coredns"
  # The platform layer (docs/lab-kubernetes.md "Kueue and the NetworkPolicy agent"): Kueue's
  # Makefile `build` target (CGO off, pkg/version ldflags; BuildDate = the tag's time),
  # controller-gen for its CRDs (Kueue's Makefile `go install`s it), and the NetworkPolicy
  # agent as kube-network-policies' Dockerfile builds ./cmd (CGO off, no ldflags).
  "kueue|kueue|0||-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION -X sigs.k8s.io/kueue/pkg/version.BuildDate=$KUEUE_BUILD_DATE|sigs.k8s.io/kueue/cmd/kueue"
  "controller-gen|controller-tools|0||-s -w|sigs.k8s.io/controller-tools/cmd/controller-gen"
  "kube-network-policies|kube-network-policies|0||-s -w|sigs.k8s.io/kube-network-policies/cmd"
  # The lab's NetworkPolicy agent: kube-router's Makefile `kube-router` target (CGO off,
  # pkg/version ldflags; Version = the tag, BuildDate = the tag's time).
  "kube-router|kube-router|0||-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$KUBE_ROUTER_VERSION -X github.com/cloudnativelabs/kube-router/v2/pkg/version.BuildDate=$KUBE_ROUTER_BUILD_DATE|github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
)
# The lab's own tools and stamped components: built like the recipe's components, but keyed
# on their inputs (a stamp per hash of the wrapper's go.mod/go.sum, any .go source and the
# line) instead of the cache directory, so adding or changing one never rebuilds the rest.
# Their versions sit in versions.env's "Stamped components" block, which <hash> leaves out.
#   netcheck: the TCP probe of the lab's NetworkPolicy tests (netcheck/main.go)
#   s3probe: the S3 GET of the object store's test, SigV4 by hand (s3probe/main.go)
#   versitygw: the lab's S3 object store, as its Makefile builds cmd/versitygw (CGO off,
#     main.Version and main.BuildTime; main.Build is the commit, which the proxy does not carry)
#   nvdp-config: reads device-plugin configs with NVIDIA's k8s-device-plugin config package
#     (nvdp-config/main.go); its module's Helm chart is copied to <hash>/charts/ beside it
#   nvidia-device-plugin, gpu-feature-discovery: NVIDIA's own, for a real GPU node (issue 28);
#     cgo, since go-nvml opens libnvidia-ml.so at run time; version ldflags as their Makefile
#   nvidia-ctk, nvidia-cdi-hook: NVIDIA's container toolkit, to write and apply a CDI spec
#   prometheus-adapter: the inference HPA's custom metrics API, as its Makefile builds
#     ./cmd/adapter (CGO off, no version ldflags)
#   kwok: fake Nodes kept Ready by one process, for the 1,000-node benchmark
#     (lab/benchmarks/bench_kwok.py); as its hack/releases.sh builds ./cmd/kwok (CGO off,
#     consts.Version = the tag)
#   dra-example-driver: the example DRA driver's kubelet plugin for the lab's DRA pool
#     (docs/dra.md), as its Makefile's cmd-% target builds ./cmd/dra-example-kubeletplugin
#     (main.version = the tag; CGO off: it needs no C, and a lab image wants a static binary)
NETCHECK_VERSION=v1
S3PROBE_VERSION=v1
LAB_TOOLS=(
  "netcheck|netcheck|0||-s -w -X main.version=$NETCHECK_VERSION|gpurack.lab/k8s-build/netcheck"
  "s3probe|s3probe|0||-s -w -X main.version=$S3PROBE_VERSION|gpurack.lab/k8s-build/s3probe"
  "versitygw|versitygw|0||-s -w -X main.Version=$VERSITYGW_VERSION -X main.BuildTime=$VERSITYGW_BUILD_DATE|github.com/versity/versitygw/cmd/versitygw"
  "nvdp-config|nvdp-config|0||-s -w -X main.version=$NVDP_VERSION|gpurack.lab/k8s-build/nvdp-config"
  "nvidia-device-plugin|nvidia-device-plugin|1||-s -w -X github.com/NVIDIA/k8s-device-plugin/internal/info.version=$NVDP_VERSION|github.com/NVIDIA/k8s-device-plugin/cmd/nvidia-device-plugin"
  "gpu-feature-discovery|nvidia-device-plugin|1||-s -w -X github.com/NVIDIA/k8s-device-plugin/internal/info.version=$NVDP_VERSION|github.com/NVIDIA/k8s-device-plugin/cmd/gpu-feature-discovery"
  "nvidia-ctk|nvidia-container-toolkit|1||-s -w -X github.com/NVIDIA/nvidia-container-toolkit/internal/info.version=$NVCT_VERSION|github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-ctk"
  "nvidia-cdi-hook|nvidia-container-toolkit|1||-s -w -X github.com/NVIDIA/nvidia-container-toolkit/internal/info.version=$NVCT_VERSION|github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-cdi-hook"
  "prometheus-adapter|prometheus-adapter|0||-s -w|sigs.k8s.io/prometheus-adapter/cmd/adapter"
  "kwok|kwok|0||-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION|sigs.k8s.io/kwok/cmd/kwok"
  "dra-example-kubeletplugin|dra-example-driver|0||-s -w -X main.version=$DRA_EXAMPLE_DRIVER_VERSION|sigs.k8s.io/dra-example-driver/cmd/dra-example-kubeletplugin"
)
OPTIONAL=" coredns etcdctl "
# Built only when named (`--only kube-network-policies`): kube-network-policies (about 5 min
# cold, its image and manifest) cannot enforce on the lab machines' kernels (no
# CONFIG_NFT_QUEUE); kube-router's firewall is the lab's agent instead. The recipe (and so the
# cache key) still holds it. helm (about 90 s cold) is built by default: `make test` renders
# NVIDIA's device-plugin chart with it (lab/tests/test_device_plugin_chart.py).
# NVIDIA's device plugin, GPU feature discovery and container toolkit are for a real GPU node
# only (docs/gpu-node.md): `build.sh --only nvidia-device-plugin gpu-feature-discovery
# nvidia-ctk nvidia-cdi-hook`; the CPU lab and `make test` never run them.
# kwok is for `make bench-kwok` and the smoke of it in `make test`, `make bench-scale-smoke`
# (`build.sh --only kwok`), never for the lab cluster.
ON_REQUEST=" kube-network-policies image:kube-network-policies nvidia-device-plugin gpu-feature-discovery nvidia-ctk nvidia-cdi-hook kwok "
# Linked against the C library dynamically, as NVIDIA builds them: they dlopen libnvidia-ml.so,
# which needs the host's own glibc (a static glibc cannot load it safely). They run on a GPU
# node's OS (Ubuntu 24.04's glibc 2.39 runs what Debian 12's 2.36 links), never in the lab.
HOST_LINKED=" nvidia-device-plugin gpu-feature-discovery nvidia-ctk nvidia-cdi-hook "
# runc is extra CGO work (libseccomp); per docs/lab-kubernetes.md containerd 2.x wants a
# newer runc than Debian 12's 1.1.5, so it is built unless RUNC_VERSION is empty.
[[ -z ${RUNC_VERSION:-} ]] && RECIPE=("${RECIPE[@]/#runc|*/}")
# binaries the runc build needs besides Go: gcc and libseccomp-dev (static library)

# Debian 12's iptables (nft backend) with its extensions and the names that call it: the
# kube-proxy and kube-router images carry it (mkimage.py adds the libraries ldd names).
IPTABLES_FILES="--host-file /usr/sbin/xtables-nft-multi --host-tree /usr/lib/x86_64-linux-gnu/xtables"
for name in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  IPTABLES_FILES+=" --symlink /usr/sbin/$name:xtables-nft-multi"
done
# Images: name | tag | binary | extra mkimage.py arguments. kubeadm names them
# <imageRepository>/<name>:<tag>; the tags are the ones kubeadm v1.36 asks for.
IMAGES=(
  "kube-apiserver|$KUBERNETES_VERSION|kube-apiserver|"
  "kube-controller-manager|$KUBERNETES_VERSION|kube-controller-manager|"
  "kube-scheduler|$KUBERNETES_VERSION|kube-scheduler|"
  "kube-proxy|$KUBERNETES_VERSION|kube-proxy|--host-file /usr/sbin/nft $IPTABLES_FILES"
  "etcd|${ETCD_VERSION#v}-0|etcd|--dir /var/lib/etcd:0700"
  "pause|$PAUSE_VERSION|pause|"
  "coredns|$COREDNS_VERSION|coredns|"
  "kueue|$KUEUE_VERSION|kueue|--user 65532:65532"
  "kube-network-policies|$KUBE_NETWORK_POLICIES_VERSION|kube-network-policies|"
  "kube-router|$KUBE_ROUTER_VERSION|kube-router|--host-file /usr/sbin/ipset $IPTABLES_FILES"
  "netcheck|$NETCHECK_VERSION|netcheck|"
  "s3probe|$S3PROBE_VERSION|s3probe|"
  # non-root as the other platform images; /data (the POSIX backend) and /iam are emptyDirs
  # in the lab's Deployment, the folders here only give them an owner when run without one
  "versitygw|$VERSITYGW_VERSION|versitygw|--user 65532:65532 --dir /data:0755 --dir /iam:0755"
  # non-root as the other platform images (upstream's Dockerfile says 65534); the Deployment
  # mounts emptyDirs on /tmp and on its --cert-dir, where it writes its self-signed certificate
  "prometheus-adapter|$PROMETHEUS_ADAPTER_VERSION|prometheus-adapter|--user 65532:65532"
  # root, as upstream's: the plugin writes the kubelet's plugin sockets and the CDI specs
  # (hostPath /var/lib/kubelet/plugins*, /var/run/cdi)
  "dra-example-driver|$DRA_EXAMPLE_DRIVER_VERSION|dra-example-kubeletplugin|"
)

# ---------------------------------------------------------------------------------------
log() { printf '[k8s-build %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

wrapper_dirs() { local l; for l in "${RECIPE[@]}"; do [[ -n $l ]] && cut -d'|' -f2 <<<"$l"; done | sort -u; }

cache_hash() {
  {
    # versions.env without its "Stamped components" block (LAB_TOOLS are stamped on their own)
    sed '/^# >>> Stamped components/,/^# <<< Stamped components/d' "$HERE/versions.env"
    cat "$HERE/pause/main.go"
    local d; for d in $(wrapper_dirs); do cat "$HERE/$d/go.mod" "$HERE/$d/go.sum" 2>/dev/null || true; done
    printf '%s\n' "${RECIPE[@]}" "$GOFLAGS"
    go version
  } | sha256sum | cut -c1-16
}

# --- --update: (re)generate the wrapper modules -----------------------------------------
gen_header() {  # dir upstream-module version upstream-go.mod-file
  local dir=$1 mod=$2 ver=$3 upmod=$4 gov
  gov=$(awk '$1=="go"{print $2; exit}' "$upmod")
  {
    echo "// Wrapper module: builds commands of $mod at $ver."
    # The folder's old name stays in this line: the go.mod files are inputs of <hash>, and
    # regenerating them unchanged must not move the cache.
    echo "// Generated by tools/k8s-build/build.sh --update from versions.env; do not edit."
    echo "module gpurack.lab/k8s-build/$dir"
    echo
    echo "go $gov"
    echo
    # Keep the GODEBUG defaults the upstream main module builds with.
    if grep -q '^godebug' "$upmod"; then grep '^godebug' "$upmod"
    else echo "godebug default=go$(cut -d. -f1,2 <<<"$gov")"; fi
    echo
    echo "require $mod $ver"
  } >"$HERE/$dir/go.mod"
}

gen_tools() {  # dir
  local l; for l in "${RECIPE[@]}" "${LAB_TOOLS[@]}"; do
    [[ -n $l && $(cut -d'|' -f2 <<<"$l") == "$1" ]] || continue
    local p; for p in $(cut -d'|' -f6 <<<"$l"); do echo "tool $p"; done
  done >>"$HERE/$1/go.mod"
}

upstream_gomod() { go mod download -json "$1@$2" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p'; }

update() {
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
  (cd "$tmp" && go mod init tmp >/dev/null 2>&1
   export GOFLAGS="-modcacherw"
   declare -A up=(
     [kubernetes]="k8s.io/kubernetes $KUBERNETES_VERSION"
     [etcd]="go.etcd.io/etcd/server/v3 $ETCD_VERSION"
     [containerd]="github.com/containerd/containerd/v2 $CONTAINERD_VERSION"
     [runc]="github.com/opencontainers/runc ${RUNC_VERSION:-none}"
     [cri-tools]="sigs.k8s.io/cri-tools $CRI_TOOLS_VERSION"
     [cni-plugins]="github.com/containernetworking/plugins $CNI_PLUGINS_VERSION"
     [helm]="helm.sh/helm/v3 $HELM_VERSION"
     [coredns]="github.com/coredns/coredns $COREDNS_VERSION"
     [kueue]="sigs.k8s.io/kueue $KUEUE_VERSION"
     [controller-tools]="sigs.k8s.io/controller-tools $CONTROLLER_TOOLS_VERSION"
     [kube-network-policies]="sigs.k8s.io/kube-network-policies $KUBE_NETWORK_POLICIES_VERSION"
     [kube-router]="github.com/cloudnativelabs/kube-router/v2 $KUBE_ROUTER_VERSION"
     [versitygw]="github.com/versity/versitygw $VERSITYGW_VERSION"
     [nvidia-device-plugin]="github.com/NVIDIA/k8s-device-plugin $NVDP_VERSION"
     [nvidia-container-toolkit]="github.com/NVIDIA/nvidia-container-toolkit $NVCT_VERSION"
     [prometheus-adapter]="sigs.k8s.io/prometheus-adapter $PROMETHEUS_ADAPTER_VERSION"
     [kwok]="sigs.k8s.io/kwok $KWOK_VERSION"
     [dra-example-driver]="sigs.k8s.io/dra-example-driver $DRA_EXAMPLE_DRIVER_VERSION"
   )
   for dir in "${!up[@]}"; do
     (( $# == 0 )) || [[ " $* " == *" $dir "* ]] || continue
     read -r mod ver <<<"${up[$dir]}"
     [[ $ver == none ]] && continue
     log "update $dir: $mod@$ver"
     mkdir -p "$HERE/$dir"
     upmod=$(upstream_gomod "$mod" "$ver")
     gen_header "$dir" "$mod" "$ver" "$upmod"
     # Upstream replace directives that point into the upstream repository
     # (./staging/..., ../api) do not apply to a dependent module: pin each of those
     # modules to its published tag at the same version instead.
     case $dir in
       kubernetes)
         echo; echo "// k8s.io/kubernetes replaces its staging modules with ./staging/src/...;"
         echo "// pin each one to the published tag of the same release instead."
         echo "replace ("
         awk '$2=="=>" && $3 ~ /^\.\/staging/ {print $1}' "$upmod" | while read -r m; do
           # sample-cli-plugin is not published and no command imports it
           go mod download -json "$m@$STAGING_VERSION" >/dev/null 2>&1 || continue
           printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"
         done
         echo ")" ;;
       etcd)
         # etcd's main package is the root of go.etcd.io/etcd/server/v3 (server/main.go);
         # server and etcdctl replace their sibling modules with ../api, ../pkg, ...
         echo; echo "// go.etcd.io/etcd/server/v3 and etcdctl/v3 replace their sibling modules"
         echo "// with ../api, ../pkg, ...; pin each one to the published tag instead."
         echo "replace ("
         { awk '$2=="=>" && $3 ~ /^\.\.?\// && $3 !~ /FORBIDDEN/ {print $1}' "$upmod"
           awk '$2=="=>" && $3 ~ /^\.\.?\// && $3 !~ /FORBIDDEN/ {print $1}' \
             "$(upstream_gomod go.etcd.io/etcd/etcdctl/v3 "$ETCD_VERSION")"; } | sort -u |
         while read -r m; do
           printf '\t%s => %s %s\n' "$m" "$m" "$ETCD_VERSION"
         done
         echo ")"
         echo "require go.etcd.io/etcd/etcdctl/v3 $ETCD_VERSION" ;;
     esac >>"$HERE/$dir/go.mod"
     # Non-local upstream replaces are copied as they are.
     awk '$2=="=>" && $3 !~ /^\./ && $1!="replace" {print "replace " $0}' "$upmod" >>"$HERE/$dir/go.mod"
     gen_tools "$dir"
     rm -f "$HERE/$dir/go.sum"
     (cd "$HERE/$dir" && GOFLAGS=-mod=mod go mod tidy && go mod download)
   done)
  log "updated; review with: git diff -- lab/k8s-build"
}

# --- build ------------------------------------------------------------------------------
declare -A COLD NOW STATUS
record() {  # name seconds status
  NOW[$1]=$2; STATUS[$1]=$3
}

is_static() {  # file: an ELF executable, no ELF interpreter, no shared libraries needed
  LC_ALL=C readelf -hW "$1" 2>/dev/null | grep -qE 'Type: +(EXEC|DYN)' \
    && ! LC_ALL=C readelf -lW "$1" 2>/dev/null | grep -q 'Requesting program interpreter' \
    && ! LC_ALL=C readelf -dW "$1" 2>/dev/null | grep -q '(NEEDED)'
}

build_component() {  # recipe line
  local name dir cgo tags ldflags pkgs bflags
  IFS='|' read -r name dir cgo tags ldflags pkgs bflags <<<"$1"
  local stamp="$OUT/stamps/$name" tmp="$OUT/tmp/$name" logf="$OUT/logs/$name.log"
  if [[ -f $stamp ]]; then
    COLD[$name]=$(cat "$stamp"); record "$name" 0 cached; return 0
  fi
  rm -rf "$tmp"; mkdir -p "$tmp"
  local -a p f; read -r -a p <<<"$pkgs"; read -r -a f <<<"$bflags"
  local target="$tmp/$name"; (( ${#p[@]} > 1 )) && target="$tmp/"
  log "building $name ($dir, CGO_ENABLED=$cgo${tags:+, tags: $tags})"
  local start=$SECONDS rc=0
  (cd "$HERE/$dir" && CGO_ENABLED=$cgo nice -n "$NICE" \
      go build "${f[@]}" -tags "$tags" -ldflags "$ldflags" -o "$target" "${p[@]}") >"$logf" 2>&1 || rc=$?
  local secs=$((SECONDS - start))
  if (( rc != 0 )); then
    log "FAILED $name after ${secs}s (log: $logf)"
    { echo "== $name (go build exit $rc after ${secs}s)"; tail -n 30 "$logf"; echo; } >>"$OUT/FAILED.txt"
    record "$name" "$secs" FAILED; COLD[$name]=-
    return 1
  fi
  local f; for f in "$tmp"/*; do
    [[ $HOST_LINKED == *" $name "* ]] || is_static "$f" || { echo "== $name: $(basename "$f") is not static" >>"$OUT/FAILED.txt"
                        record "$name" "$secs" FAILED; COLD[$name]=-; return 1; }
    mv -f "$f" "$OUT/bin/"
  done
  echo "$secs" >"$stamp"; COLD[$name]=$secs; record "$name" "$secs" built
  log "built $name in ${secs}s"
}

build_image() {  # image line
  local name tag bin extra
  IFS='|' read -r name tag bin extra <<<"$1"
  local ref="$IMAGE_REPOSITORY/$name:$tag" file="$OUT/images/$name.tar"
  local key="image:$name" stamp="$OUT/stamps/image-$name" inputs
  if [[ ! -x $OUT/bin/$bin ]]; then record "$key" 0 "skipped (no $bin)"; COLD[$key]=-; return 1; fi
  # what the image is made of: the writer, this image's line and the binary
  inputs=$({ cat "$HERE/mkimage.py"; echo "$1"; stat -c '%s %Y' "$OUT/bin/$bin"; } | sha256sum | cut -c1-16)
  if [[ -f $file && $(cut -d' ' -f2 "$stamp" 2>/dev/null) == "$inputs" ]]; then
    COLD[$key]=$(cut -d' ' -f1 "$stamp"); record "$key" 0 cached; return 0
  fi
  local dest=/usr/local/bin/$bin entry= cmd=
  case $name in
    pause) dest=/pause; entry='["/pause"]' ;;
    coredns) dest=/coredns; entry='["/coredns"]' ;;
    # as Kueue's Dockerfile: /manager on distroless static, user 65532
    kueue) dest=/manager; entry='["/manager"]' ;;
    # as its Dockerfile: /bin/netpol as CMD (install.yaml passes it as args[0])
    kube-network-policies) dest=/bin/netpol; cmd='["/bin/netpol"]' ;;
    netcheck) dest=/netcheck; entry='["/netcheck"]' ;;
    s3probe) dest=/s3probe; entry='["/s3probe"]' ;;
    # as versitygw's Dockerfile: /usr/local/bin/versitygw (without its entrypoint script:
    # the Deployment passes the flags and the root credentials' environment itself)
    versitygw) entry='["/usr/local/bin/versitygw"]' ;;
    # as kube-router's Dockerfile: /usr/local/bin/kube-router as ENTRYPOINT
    kube-router) entry='["/usr/local/bin/kube-router"]' ;;
    # as prometheus-adapter's Dockerfile: /adapter as ENTRYPOINT on distroless static
    prometheus-adapter) dest=/adapter; entry='["/adapter"]' ;;
    # as its Dockerfile: /usr/bin/dra-example-kubeletplugin (the DaemonSet names the command)
    dra-example-driver) dest=/usr/bin/dra-example-kubeletplugin ;;
  esac
  local start=$SECONDS
  local -a args=(--ref "$ref" --out "$file" --file "$OUT/bin/$bin:$dest:0755"
                 --created "$KUBERNETES_BUILD_DATE")
  [[ -n $entry ]] && args+=(--entrypoint "$entry")
  [[ -n $cmd ]] && args+=(--cmd "$cmd")
  # shellcheck disable=SC2206
  [[ -n $extra ]] && args+=($extra)
  if nice -n "$NICE" python3 "$HERE/mkimage.py" "${args[@]}" >"$OUT/images/$name.txt" 2>"$OUT/logs/image-$name.log"; then
    local secs=$((SECONDS - start)); echo "$secs $inputs" >"$stamp"; COLD[$key]=$secs; record "$key" "$secs" built
  else
    { echo "== image $name"; cat "$OUT/logs/image-$name.log"; } >>"$OUT/FAILED.txt"
    record "$key" $((SECONDS - start)) FAILED; COLD[$key]=-; return 1
  fi
}

build_lab_tool() {  # LAB_TOOLS line: rebuilt when its source or line changes
  local name=${1%%|*} dir inputs
  dir=$(cut -d'|' -f2 <<<"$1")
  # netcheck: its source and go.mod; a wrapper of an upstream module: its go.mod and go.sum
  local -a files=("$HERE/$dir/go.mod")
  compgen -G "$HERE/$dir/*.go" >/dev/null && files=("$HERE/$dir"/*.go "$HERE/$dir/go.mod")
  [[ -f $HERE/$dir/go.sum ]] && files+=("$HERE/$dir/go.sum")
  inputs=$({ cat "${files[@]}"; echo "$1"; } | sha256sum | cut -c1-16)
  if [[ $(cat "$OUT/stamps/$name.src" 2>/dev/null) != "$inputs" ]]; then rm -f "$OUT/stamps/$name"; fi
  build_component "$1" && echo "$inputs" >"$OUT/stamps/$name.src"
}

# NVIDIA's device-plugin Helm chart, from the module nvdp-config builds with, into <hash>/charts/.
copy_device_plugin_chart() {
  local chart
  chart=$(module_dir nvdp-config github.com/NVIDIA/k8s-device-plugin)/deployments/helm/nvidia-device-plugin || return 1
  [[ -f $chart/Chart.yaml ]] || { echo "== nvdp-config: no chart at $chart" >>"$OUT/FAILED.txt"; return 1; }
  rm -rf "$OUT/charts/nvidia-device-plugin"; mkdir -p "$OUT/charts"
  cp -r "$chart" "$OUT/charts/" && chmod -R u+w "$OUT/charts/nvidia-device-plugin"
}

# kwok's Stages, which its binary needs as --config (kwokctl embeds them; kwok alone has none):
# node-initialize, the node heartbeat with a Lease and the fast pod stages of its kustomize/stage,
# into <hash>/manifests/kwok-stages.yaml (rewritten only when they differ).
KWOK_STAGES="node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml"
copy_kwok_stages() {
  local stage out="$OUT/manifests/kwok-stages.yaml" f
  stage=$(module_dir kwok sigs.k8s.io/kwok)/kustomize/stage || return 1
  for f in $KWOK_STAGES; do
    [[ -f $stage/$f ]] || { echo "== kwok: no stage $f in $stage" >>"$OUT/FAILED.txt"; return 1; }
    printf -- '---\n'; cat "$stage/$f"
  done >"$out.new"
  if cmp -s "$out.new" "$out"; then rm -f "$out.new"; else mv -f "$out.new" "$out"; fi
}

module_dir() {  # wrapper-dir module: the module's (read-only) directory in GOMODCACHE
  (cd "$HERE/$1" && go list -m -f '{{.Dir}}' "$2")
}

# The install manifests (manifests.py): Kueue's, with CRDs, RBAC and webhooks generated by
# controller-gen as Kueue's Makefile does, and kube-router's firewall DaemonSet. Remade (seconds, plus
# controller-gen's type-checking) when manifests.py, the versions or the tools change.
build_manifests() {
  local key=manifests stamp="$OUT/stamps/manifests" inputs b
  for b in controller-gen kubectl; do
    [[ -x $OUT/bin/$b ]] || { record "$key" 0 "skipped (no $b)"; COLD[$key]=-; return 1; }
  done
  # versions.env without its stamped block: a lab tool's version does not touch the manifests
  inputs=$({ cat "$HERE/manifests.py"
             sed '/^# >>> Stamped components/,/^# <<< Stamped components/d' "$HERE/versions.env"
             stat -c '%s %Y' "$OUT/bin/controller-gen" "$OUT/bin/kubectl"; } | sha256sum | cut -c1-16)
  if [[ -f $OUT/manifests/kueue.yaml && -f $OUT/manifests/kube-router-firewall.yaml &&
        $(cut -d' ' -f2 "$stamp" 2>/dev/null) == "$inputs" ]]; then
    COLD[$key]=$(cut -d' ' -f1 "$stamp"); record "$key" 0 cached; return 0
  fi
  local start=$SECONDS rc=0
  log "making manifests (controller-gen for Kueue's CRDs, kustomize)"
  {
    CGO_ENABLED=0 nice -n "$NICE" python3 "$HERE/manifests.py" kueue \
      --module "$(module_dir kueue sigs.k8s.io/kueue)" --version "$KUEUE_VERSION" \
      --image "$IMAGE_REPOSITORY/kueue:$KUEUE_VERSION" --gomod-dir "$HERE/kueue" \
      --controller-gen "$OUT/bin/controller-gen" --kubectl "$OUT/bin/kubectl" \
      --work "$OUT/manifests/kueue-build" --out "$OUT/manifests/kueue.yaml" &&
    nice -n "$NICE" python3 "$HERE/manifests.py" kube-router-firewall \
      --module "$(module_dir kube-router github.com/cloudnativelabs/kube-router/v2)" \
      --version "$KUBE_ROUTER_VERSION" \
      --image "$IMAGE_REPOSITORY/kube-router:$KUBE_ROUTER_VERSION" \
      --out "$OUT/manifests/kube-router-firewall.yaml"
  } >"$OUT/logs/manifests.log" 2>&1 || rc=$?
  local secs=$((SECONDS - start))
  if (( rc )); then
    { echo "== manifests (exit $rc after ${secs}s)"; tail -n 30 "$OUT/logs/manifests.log"; echo; } >>"$OUT/FAILED.txt"
    record "$key" "$secs" FAILED; COLD[$key]=-; return 1
  fi
  echo "$secs $inputs" >"$stamp"; COLD[$key]=$secs; record "$key" "$secs" built
  log "made manifests in ${secs}s: $(tail -n 1 "$OUT/manifests/kueue-build/generated-vs-shipped.txt")"
}

# kube-network-policies' manifest (on request, with its image): the module's install.yaml.
build_network_policies_manifest() {
  nice -n "$NICE" python3 "$HERE/manifests.py" kube-network-policies \
    --module "$(module_dir kube-network-policies sigs.k8s.io/kube-network-policies)" \
    --version "$KUBE_NETWORK_POLICIES_VERSION" \
    --image "$IMAGE_REPOSITORY/kube-network-policies:$KUBE_NETWORK_POLICIES_VERSION" \
    --out "$OUT/manifests/kube-network-policies.yaml" 2>>"$OUT/FAILED.txt"
}

download_modules() {
  local stamp="$OUT/stamps/modules"
  if [[ -f $stamp ]]; then COLD[modules]=$(cat "$stamp"); record modules 0 cached; return 0; fi
  local start=$SECONDS d rc=0
  for d in $(wrapper_dirs); do
    log "downloading modules for $d"
    (cd "$HERE/$d" && nice -n "$NICE" go mod download) >>"$OUT/logs/modules.log" 2>&1 || rc=1
  done
  local secs=$((SECONDS - start))
  if (( rc )); then { echo "== go mod download"; tail -20 "$OUT/logs/modules.log"; } >>"$OUT/FAILED.txt"
    record modules "$secs" FAILED; COLD[modules]=-; return 1; fi
  echo "$secs" >"$stamp"; COLD[modules]=$secs; record modules "$secs" built
}

write_report() {
  local f="$OUT/BUILD-TIMES.txt" k total_cold=0 total_now=0
  {
    echo "# gpurack lab Kubernetes build, cache $OUT"
    echo "# $(go version | cut -d' ' -f3-), nice $NICE, GOFLAGS=$GOFLAGS, $(nproc) CPUs"
    echo "# cold = seconds when first built into this cache; this run = seconds now (0 = cached)"
    echo "# last run: $(date -u +%Y-%m-%dT%H:%M:%SZ), Go build cache at its start: $GOCACHE_STATE"
    printf '%-30s %8s %9s  %s\n' component cold_s this_run status
    for k in "${ORDER[@]}"; do
      [[ -n ${STATUS[$k]:-} ]] || continue
      printf '%-30s %8s %9s  %s\n' "$k" "${COLD[$k]:--}" "${NOW[$k]}" "${STATUS[$k]}"
      [[ ${COLD[$k]:-} =~ ^[0-9]+$ ]] && total_cold=$((total_cold + COLD[$k]))
      total_now=$((total_now + NOW[$k]))
    done
    printf '%-30s %8s %9s\n' TOTAL "$total_cold" "$total_now"
    echo "# wall time of this run: $((SECONDS - RUN_START)) s"
  } >"$f"
  cat "$f"
}

write_manifest() {
  {
    echo "# versions (versions.env)"; grep -E '^[A-Z_]+=' "$HERE/versions.env"
    echo; echo "# binaries (sha256)"
    (cd "$OUT/bin" && sha256sum -- * 2>/dev/null)
    echo; echo "# images: ref manifest-digest layer-bytes file"
    cat "$OUT/images/images.txt" 2>/dev/null
  } >"$OUT/MANIFEST.txt"
}

# --- main -------------------------------------------------------------------------------
ONLY=()
case ${1:-} in
  --update) shift; update "$@"; exit 0 ;;
  --list) for l in "${RECIPE[@]}"; do [[ -n $l ]] && echo "${l%%|*}"; done; exit 0 ;;
  --print-dir) echo "$CACHE_ROOT/$(cache_hash)"; exit 0 ;;
  --only) shift; ONLY=("$@") ;;
  "") ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 64 ;;
esac

RUN_START=$SECONDS
GOCACHE_STATE=empty
[[ -n $(find "$GOCACHE" -type f -name '*-d' -print -quit 2>/dev/null) ]] && GOCACHE_STATE=warm
HASH=$(cache_hash)
OUT=$CACHE_ROOT/$HASH
mkdir -p "$OUT"/{bin,images,logs,stamps,tmp,manifests} "$GOMODCACHE" "$GOCACHE"
rm -f "$OUT/FAILED.txt"
ln -sfn "$HASH" "$CACHE_ROOT/current"
exec 9>"$OUT/.lock"
if [[ -n ${GPURACK_K8S_LOCK_WAIT:-} ]]; then lock_args=(-w "$GPURACK_K8S_LOCK_WAIT"); else lock_args=(-n); fi
flock "${lock_args[@]}" 9 || { echo "k8s-build: another build holds $OUT/.lock" >&2; exit 75; }
log "cache: $OUT"

want() {
  (( ${#ONLY[@]} == 0 )) && { [[ $ON_REQUEST != *" $1 "* ]]; return; }
  local o; for o in "${ONLY[@]}"; do [[ $o == "$1" ]] && return 0; done; return 1
}

ORDER=(modules)
failed_required=0
download_modules || failed_required=1
for line in "${RECIPE[@]}"; do
  [[ -n $line ]] || continue
  name=${line%%|*}; ORDER+=("$name")
  want "$name" || continue
  if ! build_component "$line"; then
    [[ $OPTIONAL == *" $name "* ]] || failed_required=1
  fi
done
for line in "${LAB_TOOLS[@]}"; do
  name=${line%%|*}; ORDER+=("$name")
  want "$name" || continue
  build_lab_tool "$line" || failed_required=1
done
for line in "${IMAGES[@]}"; do
  name=${line%%|*}; ORDER+=("image:$name")
  want "image:$name" || want "$name" || continue
  build_image "$line" || { [[ $name == coredns ]] || failed_required=1; }
done
if want nvdp-config; then copy_device_plugin_chart || failed_required=1; fi
if want kwok; then copy_kwok_stages || failed_required=1; fi
ORDER+=(manifests)
if want manifests || want kueue || want kube-router; then build_manifests || failed_required=1; fi
if want kube-network-policies; then build_network_policies_manifest || failed_required=1; fi
rmdir "$OUT"/tmp/* "$OUT/tmp" 2>/dev/null || true
for line in "${IMAGES[@]}"; do cat "$OUT/images/${line%%|*}.txt" 2>/dev/null || true; done >"$OUT/images/images.txt"
# (re)write the checksums only when something changed: hashing 750 MB takes seconds
if [[ " ${STATUS[*]} " == *" built "* || ! -f $OUT/MANIFEST.txt ]]; then write_manifest; fi
write_report
if [[ -f $OUT/FAILED.txt ]]; then
  log "some components failed; see $OUT/FAILED.txt"
fi
if [[ " ${STATUS[*]} " == *" built "* ]]; then sizes=("$OUT" "$GOMODCACHE" "$GOCACHE"); else sizes=("$OUT"); fi
du -sh "${sizes[@]}" 2>/dev/null | sed 's/^/[k8s-build] size /' >&2
# CI: keep only the output directory (about 1 GB) once everything built; the Go module
# and build caches (about 9 GB) are only needed to build again.
if [[ -n ${GPURACK_K8S_PRUNE:-} ]] && (( failed_required == 0 )); then
  for d in "$GOMODCACHE" "$GOCACHE"; do   # only our own caches, never a shared one
    if [[ $d == "$CACHE_ROOT"/* ]]; then log "pruning $d"; rm -rf "$d"
    else log "not pruning $d: outside $CACHE_ROOT"; fi
  done
fi
exit "$failed_required"
