# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-ins of NVIDIA's data center stack, for bare-metal GPU servers and guests whose VMs hold whole GPUs
(build.py writes them with the guest driver's):

- NVIDIA's data center driver for each release in DATACENTER_DRIVERS (datacenter/): cuda-drivers-<branch> and
  nvidia-open-<branch> packages (the two kernel module flavours), also as a flat apt repository (cuda-repo/) standing
  for NVIDIA's CUDA repository, and NVIDIA-Linux-x86_64-<version>.run; their nvidia-smi answers only while the lab's
  kernel (datacenter/modprobe.py) runs the installed module.
- datacenter-gpu-manager-4-core_4.2.3-1_amd64.deb (dcgmi, nv-hostengine, the nvidia-dcgm unit) and
  datacenter-gpu-manager-4-cuda12_4.2.3-1_amd64.deb (depends on it), NVIDIA DCGM 4 under its package names; dcgm/dcgmi
  on its own too.
- NVIDIA's NCCL packages in cuda-repo/ for each build in NCCL_PACKAGES: libnccl2_<version>+cuda<X.Y>_amd64.deb
  (libnccl.so.2 under /usr/lib/x86_64-linux-gnu) and libnccl-dev (nccl.h under /usr/include, libnccl.so), as the
  real packages lay them out.
- nccl-tests-<version>.tar.gz: a source archive of nccl-tests (nccl/: its Makefile, sources that include nccl.h)
  whose make, with the stand-in nvcc of an installed toolkit and NCCL's development files, builds all_reduce_perf
  and the other *_perf: nccl/perf under each name, with bus bandwidths that follow the machine's nvidia-smi topology.
- passthrough/: nvidia-smi for a VM with whole GPUs that keeps MIG state (mig/), and the -q recordings of a
  passthrough H100 80GB and L40S it answers from.
- directpath/: nvidia-smi for a lab guest whose VM holds whole GPUs of the lab vCenter (directpath/), with the host
  shell stand-in's formats (lab/hosts) it renders them in.
- server/: nvidia-smi for a lab bare-metal GPU server (lab/servers) with the host shell stand-in's modules, and the
  lab kernel's boot (datacenter/modprobe.py and the unit that runs it at every reboot of a server).
- nvidia-fabricmanager-535_<version>-1_amd64.deb for 535.161.08 (the driver of the 8x H100 recording) and
  535.154.05 (a version no lab driver has), nvidia-fabricmanager_580.65.06-1_amd64.deb (R580's name): NVIDIA Fabric
  Manager's nv-fabricmanager and its unit (lab/servers).
"""

from __future__ import annotations

import base64
import json
import os
import tarfile

from packing import HERE, control, deb, dpkg_deb, index_apt_repository, installer_script, put, read, tar_gz

DCGM_VERSION = "4.2.3-1"
# NVIDIA's data center driver: (version, CUDA version nvidia-smi reports: the newest the catalog's CUDA table gives
# that driver). 535.161.08 is the driver of the 8x H100 recording; 580.65.06 the first R580 (CUDA 13.0).
DATACENTER_DRIVERS = (("535.161.08", "12.2"), ("580.65.06", "13.0"))
DATACENTER_RECORDING = "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt"
DATACENTER_PACKAGES = {"proprietary": "cuda-drivers-%s", "open": "nvidia-open-%s"}
# NCCL builds in the CUDA repository stand-in: (version, CUDA release). NVIDIA's versions read
# <nccl>-<build>+cuda<X.Y> (NCCL Installation Guide); which CUDA releases NVIDIA built 2.21.5 for is the lab's
# choice here (12.1, the lab servers' toolkit, and 11.0, a build for another major), not confirmed.
NCCL_PACKAGES = (("2.21.5-1", "12.1"), ("2.21.5-1", "11.0"))
# nccl-tests release of the source archive stand-in (github.com/NVIDIA/nccl-tests tags: v2.13.6 is one).
NCCL_TESTS_VERSION = "2.13.6"
NCCL_TESTS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall")
PASSTHROUGH_RECORDINGS = {"q-h100-passthrough.txt": "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt",
                          "q-l40s-passthrough.txt": "q_l40s_ada_passthrough_driver595.txt"}
SERVERS = os.path.join(HERE, "..", "..", "servers", "standins")
# Fabric Manager versions: the lab's data center drivers, and one that matches no lab driver.
FABRIC_MANAGER_VERSIONS = ("535.161.08", "535.154.05", "580.65.06")


def build(out, fixtures, work):
    """Every stand-in of the data center stack into ``out``."""
    build_passthrough_smi(out, fixtures)
    build_nccl(out, work)
    build_directpath_smi(out)
    build_dcgm(out, work)
    for release in DATACENTER_DRIVERS:
        build_datacenter_driver(out, fixtures, work, release)
    index_apt_repository(os.path.join(out, "cuda-repo"))
    build_server_standins(out, work)


def datacenter_files(tree, fixtures, release, flavour, unit=True):
    """The driver's files; ``unit``: with nvidia-persistenced's systemd unit, as NVIDIA's packages have it (its
    installer ships only sample init scripts, nvidia-persistenced(1), INSTALLATION)."""
    version, cuda = release
    put(tree, "usr/bin/nvidia-smi", read("datacenter", "nvidia-smi"), 0o755)
    put(tree, "usr/bin/nvidia-persistenced", read("datacenter", "nvidia-persistenced"), 0o755)
    if unit:
        put(tree, "lib/systemd/system/nvidia-persistenced.service", read("datacenter", "nvidia-persistenced.service"))
    put(tree, "usr/share/nvidia/lab-dc/modprobe.py", read("datacenter", "modprobe.py"), 0o755)
    put(tree, "usr/share/nvidia/lab-dc/driver.json", json.dumps({"version": version, "cuda": cuda, "flavour": flavour}))
    with open(os.path.join(fixtures, DATACENTER_RECORDING)) as handle:
        put(tree, "usr/share/nvidia/lab-dc/q-server.txt", handle.read())


def build_datacenter_driver(out, fixtures, work, release):
    """Both flavours' packages of one release into cuda-repo/, and its runfile."""
    version = release[0]
    branch = version.split(".")[0]
    repo = os.path.join(out, "cuda-repo")
    os.makedirs(repo, exist_ok=True)
    names = [pattern % b for pattern in DATACENTER_PACKAGES.values()
             for b in sorted(set(v.split(".")[0] for v, _cuda in DATACENTER_DRIVERS))]
    for flavour, pattern in sorted(DATACENTER_PACKAGES.items()):
        package = pattern % branch
        tree = os.path.join(work, "dc-%s-%s" % (flavour, version))
        others = ", ".join(name for name in names if name != package)
        put(tree, "DEBIAN/control", control(
            package, version + "-1",
            "NVIDIA data center driver %s, %s kernel modules (gpuops lab stand-in)\n"
            " nvidia-smi answers while the lab's kernel runs this module. No kernel module." % (version, flavour),
            depends="python3", relations={"Conflicts": others, "Replaces": others}))
        put(tree, "DEBIAN/postinst", "#!/bin/sh\nset -e\n/usr/share/nvidia/lab-dc/modprobe.py load\n"
                                     "if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi\n", 0o755)
        datacenter_files(tree, fixtures, release, flavour)
        put(tree, "usr/lib/nvidia/alternate-install-present", "cuda-drivers\n")
        dpkg_deb(tree, os.path.join(repo, "%s_%s-1_amd64.deb" % (package, version)))
    tree = os.path.join(work, "dc-run-" + version, "files")
    datacenter_files(tree, fixtures, release, "open" if int(branch) >= 560 else "proprietary", unit=False)
    put(tree, "usr/bin/nvidia-uninstall",
        "#!/bin/sh\n# Removes what the lab stand-in of NVIDIA's installer installed.\n"
        "systemctl disable --now nvidia-persistenced.service 2>/dev/null\n"
        "rm -f /usr/bin/nvidia-smi /usr/bin/nvidia-persistenced /lib/systemd/system/nvidia-persistenced.service "
        "/usr/bin/nvidia-uninstall\nrm -rf /usr/share/nvidia/lab-dc\n", 0o755)
    script = installer_script("datacenter", {
        "DRIVER_VERSION": version, "FLAVOUR_VARIABLE": "flavour=%s " % ("open" if int(branch) >= 560 else "proprietary")})
    payload = base64.encodebytes(tar_gz(os.path.dirname(tree))).decode()
    put(out, "NVIDIA-Linux-x86_64-%s.run" % version, script + payload, 0o755)


def build_dcgm(out, work):
    """DCGM 4's packages as NVIDIA splits them: the CUDA-major package depends on the core one, which holds dcgmi,
    nv-hostengine and the nvidia-dcgm unit (dcgm/)."""
    deb(out, work, "datacenter-gpu-manager-4-core", DCGM_VERSION,
        "NVIDIA Datacenter GPU Manager 4 core (gpuops lab stand-in)\n dcgmi, nv-hostengine, nvidia-dcgm unit.",
        [("usr/bin/dcgmi", read("dcgm", "dcgmi"), 0o755),
         ("usr/bin/nv-hostengine", read("dcgm", "nv-hostengine"), 0o755),
         ("usr/lib/systemd/system/nvidia-dcgm.service", read("dcgm", "nvidia-dcgm.service"))])
    deb(out, work, "datacenter-gpu-manager-4-cuda12", DCGM_VERSION,
        "NVIDIA Datacenter GPU Manager 4 for CUDA 12 (gpuops lab stand-in)",
        [("usr/libexec/datacenter-gpu-manager-4/plugins/cuda12/README.lab", "gpuops lab stand-in\n")],
        depends="datacenter-gpu-manager-4-core (= %s)" % DCGM_VERSION)
    put(out, "dcgm/dcgmi", read("dcgm", "dcgmi"), 0o755)


def nccl_header(version):
    major, minor, patch = version.split("-")[0].split(".")
    return ("/* nccl.h: NCCL %s (gpuops lab stand-in) */\n#ifndef NCCL_H_\n#define NCCL_H_\n\n#define NCCL_MAJOR %s\n"
            "#define NCCL_MINOR %s\n#define NCCL_PATCH %s\n#define NCCL_SUFFIX \"\"\n\n"
            "#define NCCL_VERSION_CODE %d\n#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? "
            "(X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))\n\n#endif\n"
            % (version, major, minor, patch, int(major) * 10000 + int(minor) * 100 + int(patch)))


def build_nccl(out, work):
    """NVIDIA's NCCL packages (runtime and development) of each build into cuda-repo/, and the nccl-tests source
    archive."""
    repo = os.path.join(out, "cuda-repo")
    os.makedirs(repo, exist_ok=True)
    for version, cuda in NCCL_PACKAGES:
        full = "%s+cuda%s" % (version, cuda)
        release = version.split("-")[0]
        runtime = os.path.join(work, "nccl-%s" % full)
        put(runtime, "DEBIAN/control", control(
            "libnccl2", full, "NVIDIA Collective Communication Library (NCCL) Runtime (gpuops lab stand-in)"))
        put(runtime, "usr/lib/x86_64-linux-gnu/libnccl.so.%s" % release, "lab stand-in for NCCL %s\n" % full)
        os.symlink("libnccl.so.%s" % release, os.path.join(runtime, "usr/lib/x86_64-linux-gnu/libnccl.so.2"))
        dpkg_deb(runtime, os.path.join(repo, "libnccl2_%s_amd64.deb" % full))
        dev = os.path.join(work, "nccl-dev-%s" % full)
        put(dev, "DEBIAN/control", control(
            "libnccl-dev", full, "NVIDIA Collective Communication Library (NCCL) Development Files (gpuops lab "
            "stand-in)", depends="libnccl2 (= %s)" % full))
        put(dev, "usr/include/nccl.h", nccl_header(version))
        put(dev, "usr/include/nccl_net.h", "/* nccl_net.h (gpuops lab stand-in) */\n")
        put(dev, "usr/lib/x86_64-linux-gnu/libnccl_static.a", "lab stand-in for NCCL %s\n" % full)
        os.symlink("libnccl.so.2", os.path.join(dev, "usr/lib/x86_64-linux-gnu/libnccl.so"))
        dpkg_deb(dev, os.path.join(repo, "libnccl-dev_%s_amd64.deb" % full))
    name = "nccl-tests-%s" % NCCL_TESTS_VERSION
    tree = os.path.join(work, name)
    put(tree, "Makefile", read("nccl", "Makefile"))
    put(tree, "README.md", "# NCCL Tests (gpuops lab stand-in %s)\n\nBuild with `make CUDA_HOME=/path/to/cuda`; the "
                           "programs land in build/.\n" % NCCL_TESTS_VERSION)
    put(tree, "src/common.h", read("nccl", "src", "common.h"))
    put(tree, "src/common.cu", read("nccl", "src", "common.cu"))
    for test in NCCL_TESTS:
        put(tree, "src/%s.cu" % test, "/* %s test (gpuops lab stand-in) */\n#include \"common.h\"\n\n"
                                      "__global__ void labKernel(float *data) {}\n" % test)
    put(tree, "src/lab/perf", read("nccl", "perf"), 0o755)
    with tarfile.open(os.path.join(out, name + ".tar.gz"), "w:gz") as archive:
        archive.add(tree, arcname=name)


def build_passthrough_smi(out, fixtures):
    put(out, "passthrough/nvidia-smi", read("mig", "nvidia-smi"), 0o755)
    for name, fixture in PASSTHROUGH_RECORDINGS.items():
        with open(os.path.join(fixtures, fixture), "rb") as handle:
            put(out, "passthrough/" + name, handle.read())


def build_directpath_smi(out):
    """The DirectPath guest stand-in and the lab/hosts modules it renders with, side by side."""
    put(out, "directpath/nvidia-smi", read("directpath", "nvidia-smi"), 0o755)
    for name in ("nvidia_smi.py", "smi_models.py", "smi_render.py"):
        with open(os.path.join(HERE, "..", "..", "hosts", name)) as handle:
            put(out, "directpath/" + name, handle.read())


def build_server_standins(out, work):
    """The bare-metal servers' nvidia-smi with the lab/hosts modules it renders with, and Fabric Manager's package
    per version."""
    put(out, "server/nvidia-smi", read(SERVERS, "nvidia-smi"), 0o755)
    put(out, "server/modprobe.py", read("datacenter", "modprobe.py"), 0o755)
    put(out, "server/gpuops-lab-boot.service", read(SERVERS, "gpuops-lab-boot.service"))
    for name in ("nvidia_smi.py", "smi_models.py", "smi_render.py"):
        put(out, "server/" + name, read("..", "..", "hosts", name))
    for version in FABRIC_MANAGER_VERSIONS:
        branch = version.split(".")[0]
        # From R580 NVIDIA's package name carries no branch (NVIDIA/gpu-driver-container#735).
        package = "nvidia-fabricmanager" if int(branch) >= 580 else "nvidia-fabricmanager-" + branch
        deb(out, work, package, version + "-1", "Fabric Manager for NVSwitch based systems (gpuops lab stand-in)",
            [("usr/bin/nv-fabricmanager", read(SERVERS, "nv-fabricmanager").replace("@VERSION@", version), 0o755),
             ("lib/systemd/system/nvidia-fabricmanager.service", read(SERVERS, "nvidia-fabricmanager.service")),
             ("usr/share/nvidia/nvswitch/fabricmanager.cfg", "# gpuops lab stand-in\nLOG_LEVEL=4\n")])
