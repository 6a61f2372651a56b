#!/bin/sh
@ABOUT@
set -u
LOG=/var/log/nvidia-installer.log
previous=$(sed -n 's/.*(version: \([0-9.]*\)) is now complete.*/\1/p' "$LOG" 2>/dev/null | tail -n 1)
silent=0 dkms=0 kernel_module=1 @FLAVOUR_VARIABLE@tmpdir=${TMPDIR:-/tmp}

fail() { echo "ERROR: $1" >>"$LOG"; echo "ERROR: $1" >&2; exit 1; }

{ echo "nvidia-installer log file '$LOG'"; echo "command line:"; for arg in "$@"; do echo "    $arg"; done; } >"$LOG"
for arg in "$@"; do
  case $arg in
    -s|--silent) silent=1 ;;
    --dkms) dkms=1 ;;
    --no-kernel-module|--no-kernel-modules) kernel_module=0 ;;
@OPTIONS@
    --tmpdir=*) tmpdir=${arg#*=} ;;
    *) fail "Unknown option: $arg" ;;
  esac
done
[ "$(id -u)" -eq 0 ] || fail "nvidia-installer must be run as root"
[ "$silent" -eq 1 ] || fail "The interactive installer cannot run here; use --silent."
@PACKAGED@
if [ -x /usr/bin/nvidia-uninstall ]; then
  echo "WARNING: There appears to already be a driver installed on your system (version: ${previous:-unknown}).  As part of installing this driver (version: @DRIVER_VERSION@), the existing driver will be uninstalled." >>"$LOG"
  /usr/bin/nvidia-uninstall >>"$LOG" 2>&1 || fail "Failed to uninstall the existing driver."
fi
work=$(mktemp -d "$tmpdir/nvidia-installer.XXXXXX") || fail "Cannot write to $tmpdir"
trap 'rm -rf "$work"' EXIT
sed -n '/^__PAYLOAD__$/,$p' "$0" | tail -n +2 | base64 -d | tar -xz -C "$work" || fail "Corrupt payload."
# Into the running system as the real installer writes its files: through /lib and the other directories that
# merged /usr made links.
tar -C "$work/files" -cf - . | tar -C / -xf - --keep-directory-symlink --no-same-owner || fail "Cannot install the files."
@INSTALLED@
echo "Installation of the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version: @DRIVER_VERSION@) is now complete." >>"$LOG"
exit 0
__PAYLOAD__
