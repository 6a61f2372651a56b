#!/bin/sh
# Lab stand-in for NVIDIA-Linux-x86_64-@DRIVER_VERSION@.run, NVIDIA's data center driver installer.
# Honours --silent, --dkms, --kernel-module-type=open|proprietary (560 and later),
# --kernel-module-build-directory=kernel-open (before), --no-kernel-modules and --tmpdir=; logs like nvidia-installer
# to /var/log/nvidia-installer.log; refuses a driver the package manager installed, as the real one does when a
# package left /usr/lib/nvidia/alternate-install-present; uninstalls an earlier runfile's driver first; loads the
# module (the lab kernel, modprobe.py). The payload after the marker line is a base64 tar of the files.
set -u
LOG=/var/log/nvidia-installer.log
previous=$(sed -n 's/.*(version: \([0-9.]*\)) is now complete.*/\1/p' "$LOG" 2>/dev/null | tail -n 1)
silent=0 dkms=0 kernel_module=1 flavour=@DEFAULT_FLAVOUR@ tmpdir=${TMPDIR:-/tmp}

fail() { echo "ERROR: $1" >>"$LOG"; echo "ERROR: $1" >&2; exit 1; }

{ echo "nvidia-installer log file '$LOG'"; echo "command line:"; for arg in "$@"; do echo "    $arg"; done; } >"$LOG"
for arg in "$@"; do
  case $arg in
    -s|--silent) silent=1 ;;
    --dkms) dkms=1 ;;
    --no-kernel-module|--no-kernel-modules) kernel_module=0 ;;
    --kernel-module-type=open|--kernel-module-type=proprietary) flavour=${arg#*=} ;;
    --kernel-module-build-directory=kernel-open|-m=kernel-open) flavour=open ;;
    --tmpdir=*) tmpdir=${arg#*=} ;;
    *) fail "Unknown option: $arg" ;;
  esac
done
[ "$(id -u)" -eq 0 ] || fail "nvidia-installer must be run as root"
[ "$silent" -eq 1 ] || fail "The interactive installer cannot run here; use --silent."
if [ -e /usr/lib/nvidia/alternate-install-present ]; then
  fail "An alternate method of installing the NVIDIA driver was detected. (This is usually a package provided by your distributor.) A driver installed via that method may integrate better with your system than a driver installed by nvidia-installer."
fi
if [ -x /usr/bin/nvidia-uninstall ]; then
  echo "WARNING: There appears to already be a driver installed on your system (version: ${previous:-unknown}).  As part of installing this driver (version: @DRIVER_VERSION@), the existing driver will be uninstalled." >>"$LOG"
  /usr/bin/nvidia-uninstall >>"$LOG" 2>&1 || fail "Failed to uninstall the existing driver."
fi
work=$(mktemp -d "$tmpdir/nvidia-installer.XXXXXX") || fail "Cannot write to $tmpdir"
trap 'rm -rf "$work"' EXIT
sed -n '/^__PAYLOAD__$/,$p' "$0" | tail -n +2 | base64 -d | tar -xz -C "$work" || fail "Corrupt payload."
cp -a "$work/files/." /
sed -i "s/\"flavour\": \"[a-z]*\"/\"flavour\": \"$flavour\"/" /usr/share/nvidia/lab-dc/driver.json
if [ "$kernel_module" -eq 1 ]; then
  echo "Kernel module: $flavour, built for $(uname -r)$([ "$dkms" -eq 1 ] && echo ', registered with DKMS')" >>"$LOG"
  /usr/share/nvidia/lab-dc/modprobe.py load
else
  echo "Kernel module: not installed (--no-kernel-module)" >>"$LOG"
fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
echo "Installation of the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version: @DRIVER_VERSION@) is now complete." >>"$LOG"
exit 0
__PAYLOAD__
