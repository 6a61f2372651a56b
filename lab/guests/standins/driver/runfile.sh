#!/bin/sh
# Lab stand-in for NVIDIA-Linux-x86_64-@DRIVER_VERSION@-grid.run, the GRID guest driver's runfile.
# Honours --silent, --dkms, --no-kernel-module(s) and --tmpdir=; installs the same nvidia-smi, nvidia-gridd and
# gridd.conf template as the package stand-in, plus nvidia-uninstall, and logs like nvidia-installer to
# /var/log/nvidia-installer.log. A driver installed by an earlier runfile is uninstalled first, with
# nvidia-installer's notice; one installed by the package manager makes it stop. The payload after the marker line
# is a base64 tar of the files.
set -u
LOG=/var/log/nvidia-installer.log
previous=$(sed -n 's/.*(version: \([0-9.]*\)) is now complete.*/\1/p' "$LOG" 2>/dev/null | tail -n 1)
silent=0 dkms=0 kernel_module=1 tmpdir=${TMPDIR:-/tmp}

fail() { echo "ERROR: $1" >>"$LOG"; echo "ERROR: $1" >&2; exit 1; }

{ echo "nvidia-installer log file '$LOG'"; echo "command line:"; for arg in "$@"; do echo "    $arg"; done; } >"$LOG"
for arg in "$@"; do
  case $arg in
    -s|--silent) silent=1 ;;
    --dkms) dkms=1 ;;
    --no-kernel-module|--no-kernel-modules) kernel_module=0 ;;
    --tmpdir=*) tmpdir=${arg#*=} ;;
    *) fail "Unknown option: $arg" ;;
  esac
done
[ "$(id -u)" -eq 0 ] || fail "nvidia-installer must be run as root"
[ "$silent" -eq 1 ] || fail "The interactive installer cannot run here; use --silent."
if dpkg-query -W -f '${Package}\n' 'nvidia-linux-grid-*' 2>/dev/null | grep -q .; then
  fail "An NVIDIA driver installed by the package manager was found; remove it before using this installer."
fi
if [ -x /usr/bin/nvidia-uninstall ]; then
  echo "WARNING: There appears to already be a driver installed on your system (version: ${previous:-unknown}).  As part of installing this driver (version: @DRIVER_VERSION@), the existing driver will be uninstalled." >>"$LOG"
  /usr/bin/nvidia-uninstall >>"$LOG" 2>&1 || fail "Failed to uninstall the existing driver."
fi
work=$(mktemp -d "$tmpdir/nvidia-installer.XXXXXX") || fail "Cannot write to $tmpdir"
trap 'rm -rf "$work"' EXIT
sed -n '/^__PAYLOAD__$/,$p' "$0" | tail -n +2 | base64 -d | tar -xz -C "$work" || fail "Corrupt payload."
cp -a "$work/files/." /
if [ "$kernel_module" -eq 1 ]; then
  echo "Kernel module: built for $(uname -r)$([ "$dkms" -eq 1 ] && echo ', registered with DKMS')" >>"$LOG"
else
  echo "Kernel module: not installed (--no-kernel-module)" >>"$LOG"
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload && systemctl enable --now nvidia-gridd.service
fi
echo "Installation of the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version: @DRIVER_VERSION@) is now complete." >>"$LOG"
exit 0
__PAYLOAD__
