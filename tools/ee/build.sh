#!/usr/bin/env bash
# `make ee`: the execution environment of execution-environment.yml, built with ansible-builder and podman from the
# project's own base image (tools/ee/base-image.sh) and the collection tarball of the checkout (built here, as
# `make build` builds it).
#
# Usage: tools/ee/build.sh          prints the image name
# Environment: EE_IMAGE (tag, default localhost/gpuops-vgpu-ee:current), EE_BUILD_CA_BUNDLE (the CA certificates
# pip trusts while the image builds, default this machine's: a network that inspects TLS has its CA there)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
IMAGE=${EE_IMAGE:-localhost/gpuops-vgpu-ee:current}
CA_BUNDLE=${EE_BUILD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
WORK=$ROOT/.tmp/ee
VERSION=$(sed -n 's/^version: *//p' galaxy.yml)

log() { echo "ee: $*" >&2; }

mkdir -p "$WORK"
# One build at a time: the build context below is shared (test workers build the image side by side).
exec 8>"$WORK/build.lock"
flock 8
start=$SECONDS
base=$(tools/ee/base-image.sh)
export CONTAINERS_CONF=$ROOT/.tmp/molecule/containers.conf
log "base image $base ready after $((SECONDS - start)) s"

# The CA bundle is mounted for the build's RUN steps only (Debian's pip reads it); the image keeps its own.
# The definition names the tarball without its version, so a version bump needs no edit there.
rm -rf "$WORK/dist" "$WORK/context"
ansible-galaxy collection build --force --output-path "$WORK/dist" . >&2
mv "$WORK/dist/gpuops-vgpu-$VERSION.tar.gz" "$WORK/dist/gpuops-vgpu.tar.gz"
ansible-builder build --file execution-environment.yml --context "$WORK/context" --container-runtime podman \
  --tag "$IMAGE" --build-arg EE_BASE_IMAGE="$base" -v 2 \
  --extra-build-cli-args "--volume $CA_BUNDLE:/etc/ssl/certs/ca-certificates.crt:ro" >&2
log "built $IMAGE in $((SECONDS - start)) s"
echo "$IMAGE"
