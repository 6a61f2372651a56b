# The GRID guest driver runfile's parts of ../nvidia-installer.sh, each after its "#@ NAME" line (build.py).
#@ ABOUT
# Lab stand-in for NVIDIA-Linux-x86_64-@DRIVER_VERSION@-grid.run, the GRID guest driver's runfile.
# Honours --silent, --dkms, --no-kernel-module(s) and --tmpdir=; installs the same nvidia-smi, nvidia-gridd and
# gridd.conf template as the package stand-in, plus nvidia-uninstall, and logs like nvidia-installer to
# /var/log/nvidia-installer.log. A driver installed by an earlier runfile is uninstalled first, with
# nvidia-installer's notice; one installed by the package manager makes it stop. The payload after the marker line
# is a base64 tar of the files.
#@ OPTIONS
#@ PACKAGED
if dpkg-query -W -f '${Package}\n' 'nvidia-linux-grid-*' 2>/dev/null | grep -q .; then
  fail "An NVIDIA driver installed by the package manager was found; remove it before using this installer."
fi
#@ INSTALLED
if [ "$kernel_module" -eq 1 ]; then
  echo "Kernel module: built for $(uname -r)$([ "$dkms" -eq 1 ] && echo ', registered with DKMS')" >>"$LOG"
else
  echo "Kernel module: not installed (--no-kernel-module)" >>"$LOG"
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload && systemctl enable --now nvidia-gridd.service
fi
