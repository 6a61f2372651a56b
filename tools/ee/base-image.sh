#!/usr/bin/env bash
# Builds the base image of the execution environment (execution-environment.yml) without a container registry:
# a Debian 12 root filesystem from debootstrap with what ansible-builder's v3 stages run in it (python3 and pip,
# `python3 -m venv` for its assemble script, a package manager behind options.package_manager_path) and what
# Ansible's connections need (an SSH client, CA certificates). Ansible, the collection and its Python requirements
# are added by ansible-builder, not here.
#
# The image is tagged by a hash of its build inputs; the alias (what execution-environment.yml names) moves to the
# image of the current inputs, and images of earlier inputs are removed.
#
# Usage: tools/ee/base-image.sh        build when needed, print the image name
# Environment: EE_MIRROR (Debian mirror), EE_BASE_NAME (repository name), GPUOPS_CONTAINERS_CONF
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MIRROR=${EE_MIRROR:-http://deb.debian.org/debian}
NAME=${EE_BASE_NAME:-localhost/gpuops-ee-base-bookworm}
ALIAS=$NAME:current
CONF=${GPUOPS_CONTAINERS_CONF:-$ROOT/.tmp/molecule/containers.conf}
PACKAGES=python3,python3-pip,python3-venv,ca-certificates,openssh-client

log() { echo "ee-base-image: $*" >&2; }

# shellcheck source=lab/guests/image-build.sh
source "$ROOT/lab/guests/image-build.sh"
image_build_begin "$CONF" ee-base-image

hash=$( (cat "$0" "$HERE/apt-package-manager" "$ROOT/lab/guests/image-build.sh"
         echo "$MIRROR $PACKAGES $(uname -m)") | sha256sum | cut -c1-16)
image=$NAME:$hash

if ! podman image exists "$image"; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpuops-ee-base.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  log "building $image (debootstrap bookworm from $MIRROR)"
  start=$SECONDS
  debootstrap_rootfs "$work/rootfs" "$PACKAGES" "$MIRROR"
  install -m 0755 "$HERE/apt-package-manager" "$work/rootfs/usr/local/bin/apt-package-manager"
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/usr/share/doc/"* "$work/rootfs/usr/share/man/"*
  # ansible-core refuses to run without a UTF-8 locale; C.UTF-8 is part of Debian's libc.
  import_rootfs "$work/rootfs" "$image" 'ENV LANG=C.UTF-8' 'ENV LC_ALL=C.UTF-8' 'CMD ["/bin/bash"]'
  log "built $image in $((SECONDS - start)) s"
fi
podman tag "$image" "$ALIAS"
prune_images "$NAME" "$image" "$ALIAS"
echo "$image"
