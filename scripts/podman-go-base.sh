#!/usr/bin/env bash
# Makes a local stand-in for the Dockerfile's build image
# (golang:1.26-bookworm) when no registry can be reached, as on the test
# machines: this machine's Go toolchain, CA roots and a static busybox
# (/bin/sh and the commands the build stage's RUN lines use), imported into
# podman's local storage under the same name. Nothing is pulled; safe to
# run again (it does nothing when the image is there).
set -euo pipefail
image="${1:-golang:1.26-bookworm}"
if podman image exists "$image"; then
  exit 0
fi
goroot="$(go env GOROOT)"
busybox="$(command -v busybox)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
root="$dir/rootfs"
mkdir -p "$root/bin" "$root/etc/ssl/certs" "$root/usr/local" "$root/tmp" "$root/root"
cp "$busybox" "$root/bin/busybox"
for c in sh mkdir echo chown chmod ls cat; do ln -s busybox "$root/bin/$c"; done
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
cp -a "$goroot" "$root/usr/local/go"
chmod 1777 "$root/tmp"
tar -C "$root" -cf "$dir/base.tar" .
podman import --quiet \
  --change 'ENV PATH=/usr/local/go/bin:/bin' --change 'ENV HOME=/root' --change 'ENV GOTOOLCHAIN=local' \
  "$dir/base.tar" "localhost/$image" >/dev/null
