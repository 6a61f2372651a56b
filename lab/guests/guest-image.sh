#!/usr/bin/env bash
# Builds the Debian 12 guest image the molecule scenarios run in, and writes the podman settings this machine
# needs. No image can be pulled here, so the root filesystem comes from debootstrap.
#
# The image is tagged by a hash of its build inputs (this script and the files it copies in), so a failed build
# cannot hide behind an image left over from an earlier one. The tag named by GUEST_IMAGE_ALIAS (what the
# scenarios' molecule.yml use) is moved to the image of the current inputs on every run.
#
# Usage: lab/guests/guest-image.sh            build when needed, print the image name
# Environment: GUEST_MIRROR (Debian mirror), GPUOPS_CONTAINERS_CONF (where to write containers.conf),
# GUEST_IMAGE_NAME (the image's repository name; a name of its own builds and prunes beside the shared one)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MIRROR=${GUEST_MIRROR:-http://deb.debian.org/debian}
NAME=${GUEST_IMAGE_NAME:-localhost/gpuops-guest-bookworm}
ALIAS=${GUEST_IMAGE_ALIAS:-$NAME:current}
CONF=${GPUOPS_CONTAINERS_CONF:-$ROOT/.tmp/molecule/containers.conf}
# What the roles expect of a minimal guest, reached over SSH like a VM. No NVIDIA software: the scenarios install
# stand-ins in prepare.
PACKAGES=systemd,systemd-sysv,dbus,python3,python3-apt,python3-venv,python3-packaging,sudo,procps,pciutils,xz-utils,ca-certificates,openssh-server

log() { echo "guest-image: $*" >&2; }

# shellcheck source=lab/guests/image-build.sh
source "$HERE/image-build.sh"
# One build at a time: scenarios started together wait for the first build instead of repeating it.
image_build_begin "$CONF" guest-image

hash=$( (cat "$0" "$HERE/image-build.sh"; echo "$MIRROR $PACKAGES $(uname -m)") | sha256sum | cut -c1-16)
image=$NAME:$hash

if ! podman image exists "$image"; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpuops-guest.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  log "building $image (debootstrap bookworm from $MIRROR)"
  start=$SECONDS
  # The guest resolves package dependencies from the mirror (apt install ./driver.deb), like a real VM.
  debootstrap_rootfs "$work/rootfs" "$PACKAGES" "$MIRROR"
  # Units that only make sense on a real machine stay off in the container.
  for unit in getty@tty1.service systemd-remount-fs.service console-getty.service; do
    ln -sf /dev/null "$work/rootfs/etc/systemd/system/$unit"
  done
  # Each guest makes its own SSH host keys when it boots, as a VM cloned from a template does.
  rm -f "$work/rootfs/etc/ssh/ssh_host_"*
  mkdir -p "$work/rootfs/etc/systemd/system/ssh.service.d"
  printf '[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n' \
    >"$work/rootfs/etc/systemd/system/ssh.service.d/host-keys.conf"
  import_rootfs "$work/rootfs" "$image" 'CMD ["/sbin/init"]' 'ENV container=podman'
  log "built $image in $((SECONDS - start)) s"
fi
podman tag "$image" "$ALIAS"
# Images of earlier inputs are of no use any more.
prune_images "$NAME" "$image" "$ALIAS"
echo "$image"
