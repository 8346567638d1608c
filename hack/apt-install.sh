#!/usr/bin/env bash
# Installs Debian packages for the end-to-end tier without starting any system service.
#
# Usage: hack/apt-install.sh PACKAGE...
#
# Does nothing when every package is already installed. Otherwise runs `apt-get update` once and
# installs the missing ones with --no-install-recommends. Packages such as etcd-server and prometheus
# start a service on install (on 2379 / 9090, ports we must never take): a /usr/sbin/policy-rc.d that
# exits 101 forbids that for the duration of the install, and whatever policy-rc.d was there before is
# put back afterwards. A machine-wide lock serialises concurrent callers (two clones, two builds), so
# one caller never restores policy-rc.d while another is still installing.
set -euo pipefail

APT_LOCK=${KUBETIDE_APT_LOCK:-/var/lock/kubetide-apt.lock}
POLICY=/usr/sbin/policy-rc.d

log() { printf '[apt-install] %s\n' "$*"; }

missing_packages() {
  local pkg
  for pkg in "$@"; do
    if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
      printf '%s\n' "$pkg"
    fi
  done
}

# Puts the previous policy-rc.d back (or removes ours when there was none).
restore_policy() {
  if [ -n "${policy_backup:-}" ] && [ -e "$policy_backup" ]; then
    mv -f "$policy_backup" "$POLICY"
  else
    rm -f "$POLICY"
  fi
}

main() {
  [ "$#" -gt 0 ] || { echo "usage: $0 PACKAGE..." >&2; exit 2; }
  mapfile -t missing < <(missing_packages "$@")
  [ "${#missing[@]}" -gt 0 ] || return 0

  exec 8>"$APT_LOCK"
  flock 8
  # Another caller may have installed them while we waited for the lock.
  mapfile -t missing < <(missing_packages "${missing[@]}")
  [ "${#missing[@]}" -gt 0 ] || return 0

  policy_backup=""
  if [ -e "$POLICY" ]; then
    policy_backup=$(mktemp "$POLICY.kubetide.XXXXXX")
    cp -p "$POLICY" "$policy_backup"
  fi
  trap restore_policy EXIT
  printf '#!/bin/sh\n# kubetide: no service starts during this install\nexit 101\n' >"$POLICY"
  chmod 755 "$POLICY"

  export DEBIAN_FRONTEND=noninteractive
  log "installing ${missing[*]}"
  # Waits for dpkg's own lock too, in case something outside kubetide is installing.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 install -y -qq --no-install-recommends \
    "${missing[@]}" </dev/null
  log "installed ${missing[*]}"
}

main "$@"
