#!/usr/bin/env bash
# Installs what `make lab` and `make test` need on a Debian 12 machine: system packages (when missing) and the
# Python virtual environment (rebuilt when tests/requirements.txt changes). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(golang-go golang-github-vmware-govmomi-dev python3-venv openssl rsync git make chromium chromium-driver fonts-dejavu-core
              podman runc uidmap fuse-overlayfs slirp4netns debootstrap socat
              openssh-server openssh-client prometheus)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "Missing Debian packages: ${missing[*]}. Run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "Installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# ansible-navigator refuses podman without the host's POSIX message queues (runner starts the EE with --ipc=host);
# systemd mounts them on most machines, a container host may not.
if [ ! -d /dev/mqueue ] && [ "$(id -u)" -eq 0 ]; then
  mkdir -p /dev/mqueue && mount -t mqueue mqueue /dev/mqueue
fi

PYTHON=${PYTHON:-python3}
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt tests/requirements.txt | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "Installing the Python environment in .venv (tests/requirements.txt)"
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  log=$(mktemp)
  if ! (cd tests && ../.venv/bin/pip install -q -r requirements.txt) >"$log" 2>&1; then
    grep -v "^WARNING: Location" "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  echo "$want" >"$stamp"
fi

# The Redfish client libraries tests/bmc_clients runs against the lab BMCs, in a virtual environment of their own.
tools/bmc_clients_venv.sh >/dev/null
