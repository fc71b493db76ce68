#!/usr/bin/env bash
# Installs what the end-to-end tests need (the OAuth clients, the console in
# Chromium checked by axe-core, the container image), from registries only (no
# browser downloads): Debian's chromium when /usr/bin/chromium is missing,
# node and npm when missing, and the pinned npm packages of test/node from
# the committed lockfile. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi
# podman (and a static busybox for the stand-in build image of
# scripts/podman-go-base.sh) for the container image test.
# With its recommended packages, as on the machine where the test was
# written (fuse-overlayfs, netavark, buildah).
if ! command -v podman >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
  apt_install busybox-static
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi

(cd test/node && npm ci --no-audit --no-fund --loglevel=error)
