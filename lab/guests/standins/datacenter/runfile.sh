# The data center driver runfile's parts of ../nvidia-installer.sh, each after its "#@ NAME" line (build.py).
#@ ABOUT
# Lab stand-in for NVIDIA-Linux-x86_64-@DRIVER_VERSION@.run, NVIDIA's data center driver installer.
# Honours --silent, --dkms, --kernel-module-type=open|proprietary (560 and later),
# --kernel-module-build-directory=kernel-open (before), --no-kernel-modules and --tmpdir=; logs like nvidia-installer
# to /var/log/nvidia-installer.log; refuses a driver the package manager installed, as the real one does when a
# package left /usr/lib/nvidia/alternate-install-present; uninstalls an earlier runfile's driver first; loads the
# module (the lab kernel, modprobe.py). The payload after the marker line is a base64 tar of the files.
#@ OPTIONS
    --kernel-module-type=open|--kernel-module-type=proprietary) flavour=${arg#*=} ;;
    --kernel-module-build-directory=kernel-open|-m=kernel-open) flavour=open ;;
#@ PACKAGED
if [ -e /usr/lib/nvidia/alternate-install-present ]; then
  fail "An alternate method of installing the NVIDIA driver was detected. (This is usually a package provided by your distributor.) A driver installed via that method may integrate better with your system than a driver installed by nvidia-installer."
fi
#@ INSTALLED
sed -i "s/\"flavour\": \"[a-z]*\"/\"flavour\": \"$flavour\"/" /usr/share/nvidia/lab-dc/driver.json
if [ "$kernel_module" -eq 1 ]; then
  echo "Kernel module: $flavour, built for $(uname -r)$([ "$dkms" -eq 1 ] && echo ', registered with DKMS')" >>"$LOG"
  /usr/share/nvidia/lab-dc/modprobe.py load
else
  echo "Kernel module: not installed (--no-kernel-module)" >>"$LOG"
fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
