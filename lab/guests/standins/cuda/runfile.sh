#!/bin/sh
# Lab stand-in for the CUDA @CUDA_VERSION@ runfile (cuda_@CUDA_VERSION@_@DRIVER_VERSION@_linux.run).
# Honours the installer's options: --silent, --toolkit, --toolkitpath=, --defaultroot=, --driver, --override,
# --no-man-page, --tmpdir=. It lays out what the real toolkit installer leaves behind that tools read
# (bin/nvcc, lib64, include, version.json, bin/cuda-uninstaller) and logs to /var/log/cuda-installer.log.
# The payload after the marker line is a base64 tar of that tree.
set -u
VERSION=@CUDA_VERSION@
SERIES=@CUDA_SERIES@
LOG=/var/log/cuda-installer.log
silent=0 toolkit=0 driver=0 override=0 manpages=1 tmpdir=${TMPDIR:-/tmp}
toolkitpath=/usr/local/cuda-$SERIES

log() { echo "[$1]: $2" >>"$LOG"; }
fail() { log ERROR "$1"; echo "$1" >&2; exit 1; }

echo "Command line: $*" >>"$LOG"
for arg in "$@"; do
  case $arg in
    --silent) silent=1 ;;
    --toolkit) toolkit=1 ;;
    --driver) driver=1 ;;
    --override) override=1 ;;
    --no-man-page) manpages=0 ;;
    --toolkitpath=*) toolkitpath=${arg#*=} ;;
    --defaultroot=*) ;;
    --tmpdir=*) tmpdir=${arg#*=} ;;
    *) fail "Unknown option: $arg" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || fail "Installation must be run as root."
[ "$silent" -eq 1 ] || fail "The interactive installer cannot run here; use --silent."
[ "$toolkit" -eq 1 ] || [ "$driver" -eq 1 ] || fail "--silent needs --toolkit and/or --driver."
[ -d "$tmpdir" ] || fail "tmpdir $tmpdir does not exist."
case $toolkitpath in /*) ;; *) fail "--toolkitpath must be an absolute path." ;; esac

if [ "$driver" -eq 1 ]; then
  if dpkg-query -W -f '${Package}\n' 'nvidia-linux-grid-*' 2>/dev/null | grep -q .; then
    fail "Existing package manager installation of the driver found. Remove it before installing the driver."
  fi
  fail "The driver in this runfile cannot be installed here."
fi
if [ "$override" -eq 0 ] && ! command -v gcc >/dev/null 2>&1; then
  fail "Failed to verify gcc version. See log at $LOG for details."
fi

work=$(mktemp -d "$tmpdir/cuda-installer.XXXXXX") || fail "Cannot write to tmpdir $tmpdir."
trap 'rm -rf "$work"' EXIT
log INFO "Extracting into $work"
sed -n '/^__PAYLOAD__$/,$p' "$0" | tail -n +2 | base64 -d | tar -xz -C "$work" || fail "Corrupt payload."
mkdir -p "$toolkitpath"
[ "$manpages" -eq 1 ] || rm -rf "$work/toolkit/share/man"
cp -a "$work/toolkit/." "$toolkitpath/"
log INFO "Toolkit $VERSION installed in $toolkitpath"
log INFO "Driver: not installed"
printf '%s\n' "===========" "= Summary =" "===========" "" "Driver:   Not Selected" \
  "Toolkit:  Installed in $toolkitpath/" ""
exit 0
__PAYLOAD__
