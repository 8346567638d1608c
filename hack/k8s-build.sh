#!/usr/bin/env bash
# Builds the test control plane: kube-apiserver, kube-controller-manager and kube-scheduler v1.20.2,
# compiled from Debian bookworm's `kubernetes` source package, plus Debian's kubectl 1.20.2.
#
# Usage: hack/k8s-build.sh        (cache: ${KUBETIDE_K8S_CACHE:-~/.cache/kubetide/k8s-1.20.2}/bin/)
#
# No registry ships a ready kube-apiserver, and our machines reach only the package registries, so we
# build it offline from the source package, as ../shared/infra/control-plane.md describes (about 5 to 7
# minutes cold on 2 cores, 2.4 GB of disk while building). A complete cache is reused as is. Two builds
# at once are serialised by a lock in the cache; each builds in a temporary directory and renames the
# binaries into bin/, so a reader never sees half a binary. The source tree and the Go build cache are
# deleted afterwards.
#
# kubectl is taken from Debian's kubernetes-client package, unpacked into the cache rather than
# installed: it matches the server (kubectl 1.20 and its built-in kustomize v2.0.3, which deploy/ is
# written for) and it never replaces another /usr/bin/kubectl a developer may have.
set -euo pipefail

K8S_VERSION=1.20.2
CACHE=${KUBETIDE_K8S_CACHE:-$HOME/.cache/kubetide/k8s-$K8S_VERSION}
BIN=$CACHE/bin
SERVERS=(kube-apiserver kube-controller-manager kube-scheduler)
BUILD_DEPS=(golang-go rsync jq golang-github-modern-go-reflect2-dev etcd-server)
APT_LOCK=${KUBETIDE_APT_LOCK:-/var/lock/kubetide-apt.lock}
DEB_SRC_LIST=/etc/apt/sources.list.d/kubetide-deb-src
HACK=$(cd "$(dirname "$0")" && pwd)
START=$SECONDS

log() { printf '[k8s-build +%ss] %s\n' "$((SECONDS - START))" "$*"; }

# True when the binary exists, runs, and reports the expected version.
binary_ok() {
  local out
  [ -x "$BIN/$1" ] || return 1
  if [ "$1" = kubectl ]; then
    out=$("$BIN/kubectl" version --client --short 2>/dev/null) || return 1
  else
    out=$("$BIN/$1" --version 2>/dev/null) || return 1
  fi
  [[ $out == *"v$K8S_VERSION"* ]]
}

servers_ok() {
  local name
  for name in "${SERVERS[@]}"; do binary_ok "$name" || return 1; done
}

cache_complete() { servers_ok && binary_ok kubectl; }

# Writes a deb-src twin of the machine's Debian sources (deb822 or one-line format).
add_deb_src() {
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$DEB_SRC_LIST.sources"
  else
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >"$DEB_SRC_LIST.list"
  fi
}

remove_deb_src() { rm -f "$DEB_SRC_LIST.sources" "$DEB_SRC_LIST.list"; }

# Downloads the source package (into $1) with deb-src enabled only for as long as it takes. Under the
# machine-wide apt lock, so two builds with different caches do not add and remove the list under
# each other.
download_source() (
  cd "$1"
  exec 8>"$APT_LOCK"
  flock 8
  trap remove_deb_src EXIT
  add_deb_src
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get source --download-only -qq kubernetes 2>&1 | grep -v 'unsandboxed as root' || true
  ls kubernetes_*.orig.tar.gz >/dev/null
)

unpack_source() {
  local work=$1
  tar -xzf "$work"/kubernetes_*.orig.tar.gz -C "$work"
  [ -d "$work/kubernetes-$K8S_VERSION" ] || { log "unexpected source layout in $work"; exit 1; }
}

# The vendored reflect2 v1.0.1 crashes the API server under Go >= 1.18 (fatal error in
# reflect2.UnsafeIterate on the first JSON encoding): swap in Debian's fixed copy.
fix_reflect2() {
  local vendored=$1/vendor/github.com/modern-go/reflect2
  local debian=/usr/share/gocode/src/github.com/modern-go/reflect2
  rm -f "$vendored"/*.go "$vendored"/*.s
  find "$debian" -maxdepth 1 \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' -exec cp {} "$vendored"/ \;
}

# Debian's way (debian/rules): a GOPATH with k8s.io/kubernetes pointing at the tree, then the
# upstream Makefile; a plain `go build -mod=vendor` fails on go.mod updates.
compile() {
  local work=$1
  mkdir -p "$work/.go/src/k8s.io"
  ln -s "$work/kubernetes-$K8S_VERSION" "$work/.go/src/k8s.io/kubernetes"
  cd "$work/.go/src/k8s.io/kubernetes"
  env GOPATH="$work/.go" GOCACHE="$work/go-build-cache" GOFLAGS= CGO_ENABLED=0 GOPROXY=off \
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler"
  cd - >/dev/null
}

build_servers() {
  local work=$1 name
  log "building ${SERVERS[*]} v$K8S_VERSION from Debian's source package (5-7 minutes cold)"
  "$HACK/apt-install.sh" "${BUILD_DEPS[@]}"
  log "downloading the kubernetes source package"
  download_source "$work"
  log "unpacking"
  unpack_source "$work"
  fix_reflect2 "$work/kubernetes-$K8S_VERSION"
  log "compiling (GOPROXY=off, vendored modules)"
  compile "$work"
  for name in "${SERVERS[@]}"; do
    # Same filesystem: an atomic rename, so a concurrent reader sees the old binary or the new one.
    mv -f "$work/kubernetes-$K8S_VERSION/_output/bin/$name" "$BIN/$name"
  done
}

fetch_kubectl() (
  local work=$1
  log "unpacking Debian's kubectl (kubernetes-client) into the cache"
  cd "$work"
  # The package lists may be missing (fresh images ship none): update once and retry.
  apt-get download -qq kubernetes-client 2>/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get download -qq kubernetes-client; }
  dpkg-deb -x kubernetes-client_*.deb kubectl-root
  mv -f kubectl-root/usr/bin/kubectl "$BIN/kubectl"
)

main() {
  mkdir -p "$BIN"
  if cache_complete; then
    log "reusing $BIN"
    return 0
  fi
  exec 9>"$CACHE/.lock"
  if ! flock -n 9; then
    log "another build holds $CACHE/.lock: waiting for it"
    flock 9
  fi
  # Rechecked under the lock: the build we waited for may have filled the cache.
  if cache_complete; then
    log "reusing $BIN (built meanwhile)"
    return 0
  fi
  work=$(mktemp -d "$CACHE/build.XXXXXX")
  # The source tree and the Go cache (inside $work) are 2.4 GB: never leave them behind.
  trap 'log "deleting the build tree and Go cache"; rm -rf "$work"' EXIT
  servers_ok || build_servers "$work"
  binary_ok kubectl || fetch_kubectl "$work"
  cache_complete || { log "the binaries in $BIN do not report v$K8S_VERSION"; exit 1; }
  log "done: $BIN"
}

main "$@"
