#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the stand-ins for NVIDIA's guest artifacts that the molecule scenarios install.

    build.py --out DIR [--fixtures DIR]

Writes into DIR, under the real artifacts' file names:

- nvidia-linux-grid-<branch>_<version>_amd64.deb for each GRID guest driver in GUEST_DRIVERS (vGPU 14, 15.2 and
  16.0): nvidia-smi printing recorded output of a GRID A100-4C guest (licensed and unlicensed, from
  tests/fixtures/nvidia-smi, with the release's driver and CUDA version), the nvidia-gridd daemon and unit, the
  gridd.conf template, and vgpu_host.py with driver.json (the release and the catalog's branch table), through which
  a guest bound to a lab VM asks whether its host's vGPU Manager accepts it. It depends on libglvnd0, so only a
  package manager that resolves dependencies installs it; each replaces the others' files, so installing another
  branch's package takes the driver over in place (dpkg notes the old package's disappearance).
- NVIDIA-Linux-x86_64-<version>-grid.run: the same files from the driver's runfile, with nvidia-uninstall.
- nvidia-cuda-toolkit_<ver>_amd64.deb: an empty package named like Debian's CUDA toolkit (the one the CUDA role
  must refuse to run next to).
- cuda_<ver>_<driver>_linux.run for CUDA 11.6.2, 11.8.0 and 12.1.1.
- cudnn-linux-x86_64-<ver>_cuda<major>-archive.tar.xz for cuDNN 8.9.7.29 (CUDA 11) and 9.1.0.70 (CUDA 12), and
  the nvidia-cudnn-cu11 wheel; torch-1.13.1+cu116 wheel.
- client configuration tokens: a current one, a stale one and one for a license server that never answers.
- tools/: the lspci, ffmpeg and update-initramfs stand-ins and the VM's PCI configuration-space dumps.
- nvidia-container-toolkit{,-base}_1.17.8-1_amd64.deb: the NVIDIA Container Toolkit's nvidia-ctk and
  nvidia-container-runtime (toolkit/), packaged under the real package names.
- passthrough/: nvidia-smi for a VM with whole GPUs that keeps MIG state (mig/), and the -q recordings of a
  passthrough H100 80GB and L40S it answers from.
- NVIDIA's NCCL packages in cuda-repo/ for each build in NCCL_PACKAGES: libnccl2_<version>+cuda<X.Y>_amd64.deb
  (libnccl.so.2 under /usr/lib/x86_64-linux-gnu) and libnccl-dev (nccl.h under /usr/include, libnccl.so), as the
  real packages lay them out.
- nccl-tests-<version>.tar.gz: a source archive of nccl-tests (nccl/: its Makefile, sources that include nccl.h)
  whose make, with the stand-in nvcc of an installed toolkit and NCCL's development files, builds all_reduce_perf
  and the other *_perf: nccl/perf under each name, with bus bandwidths that follow the machine's nvidia-smi topology.
- directpath/: nvidia-smi for a lab guest whose VM holds whole GPUs of the lab vCenter (directpath/), with the host
  shell stand-in's formats (lab/hosts) it renders them in.
- NVIDIA's data center driver for each release in DATACENTER_DRIVERS (datacenter/): cuda-drivers-<branch> and
  nvidia-open-<branch> packages (the two kernel module flavours), also as a flat apt repository (cuda-repo/) standing
  for NVIDIA's CUDA repository, and NVIDIA-Linux-x86_64-<version>.run; their nvidia-smi answers only while the lab's
  kernel (datacenter/modprobe.py) runs the installed module; tools/server-pci.dump, the PCI bus of a server with an
  H100 SXM.
- datacenter-gpu-manager-4-core_4.2.3-1_amd64.deb (dcgmi, nv-hostengine, the nvidia-dcgm unit) and
  datacenter-gpu-manager-4-cuda12_4.2.3-1_amd64.deb (depends on it), NVIDIA DCGM 4 under its package names; dcgm/dcgmi
  on its own too.
- server/: nvidia-smi for a lab bare-metal GPU server (lab/servers) with the host shell stand-in's modules, and the
  lab kernel's boot (datacenter/modprobe.py and the unit that runs it at every reboot of a server).
- nvidia-fabricmanager-535_<version>-1_amd64.deb for 535.161.08 (the driver of the 8x H100 recording) and
  535.154.05 (a version no lab driver has), nvidia-fabricmanager_580.65.06-1_amd64.deb (R580's name): NVIDIA Fabric
  Manager's nv-fabricmanager and its unit (lab/servers).

Only the Python standard library and dpkg-deb are needed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import re
import runpy
import shutil
import struct
import subprocess
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_LICENSED = "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"
FIXTURE_UNLICENSED = "q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt"

# GRID Linux guest drivers: (version, CUDA version nvidia-smi reports). 510.47.03 is the recorded one (vGPU 14);
# 525.105.17 and 535.54.03 are the Linux drivers of vGPU 15.2 and 16.0 (the catalog's VGPU_RELEASE_DRIVERS), with
# the newest CUDA of their branch (the catalog's max_cuda).
GUEST_DRIVERS = (("510.47.03", "11.6"), ("525.105.17", "12.0"), ("535.54.03", "12.2"))
# Each branch's package replaces the others' (Replaces, no Conflicts): the lab's choice, as how NVIDIA's packages of
# different branches take each other's place was not confirmed. A Conflicts would make apt-get remove the old one
# too, but python-apt (and so Ansible's apt module with deb=) refuses a local package that conflicts with an
# installed one.
GRID_PACKAGE = "nvidia-linux-grid"
CATALOG_DATA = os.path.join(HERE, "..", "..", "..", "plugins", "module_utils", "nvidia", "_catalog_data.py")
# (runfile version, bundled driver, nvcc version, copyright year, nvcc build date, build id)
CUDA_RELEASES = (
    ("11.6.2", "510.47.03", "11.6.124", "2022", "Thu_Mar__3_15:34:45_PST_2022", "31057947"),
    ("11.8.0", "520.61.05", "11.8.89", "2022", "Wed_Sep_21_10:33:58_PDT_2022", "31833905"),
    ("12.1.1", "530.30.02", "12.1.105", "2023", "Mon_Apr__3_17:16:06_PDT_2023", "32688072"),
)
DCGM_VERSION = "4.2.3-1"
# NVIDIA's data center driver: (version, CUDA version nvidia-smi reports: the newest the catalog's CUDA table gives
# that driver). 535.161.08 is the driver of the 8x H100 recording; 580.65.06 the first R580 (CUDA 13.0).
DATACENTER_DRIVERS = (("535.161.08", "12.2"), ("580.65.06", "13.0"))
DATACENTER_RECORDING = "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt"
DATACENTER_PACKAGES = {"proprietary": "cuda-drivers-%s", "open": "nvidia-open-%s"}
CUDNN_ARCHIVES = (("8.9.7.29", "11"), ("9.1.0.70", "12"))
# NCCL builds in the CUDA repository stand-in: (version, CUDA release). NVIDIA's versions read
# <nccl>-<build>+cuda<X.Y> (NCCL Installation Guide); which CUDA releases NVIDIA built 2.21.5 for is the lab's
# choice here (12.1, the lab servers' toolkit, and 11.0, a build for another major), not confirmed.
NCCL_PACKAGES = (("2.21.5-1", "12.1"), ("2.21.5-1", "11.0"))
# nccl-tests release of the source archive stand-in (github.com/NVIDIA/nccl-tests tags: v2.13.6 is one).
NCCL_TESTS_VERSION = "2.13.6"
NCCL_TESTS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall")
CUDNN_WHEEL = ("8.9.6.50", "11")
TOKENS = {
    "client_configuration_token_05-26-2022-00-08-28.tok": "dls.gpuops.lab",
    "client_configuration_token_01-03-2022-09-15-00.tok": "dls-old.gpuops.lab",
    "client_configuration_token_unreachable.tok": "dls.unreachable.invalid",
}


def find_fixtures():
    """The recorded nvidia-smi outputs kept in the repository (tests/fixtures/nvidia-smi)."""
    path = os.path.normpath(os.path.join(HERE, "..", "..", "..", "tests", "fixtures", "nvidia-smi"))
    if not os.path.isfile(os.path.join(path, FIXTURE_LICENSED)):
        raise SystemExit("build.py: %s is missing; restore tests/fixtures/nvidia-smi from git or pass --fixtures"
                         % os.path.join(path, FIXTURE_LICENSED))
    return path


def fill(text, values):
    for key, value in values.items():
        text = text.replace("@%s@" % key, value)
    return text


def installer_script(kind, values):
    """The script of a driver runfile (kind: driver, the GRID guest driver; datacenter): nvidia-installer.sh, whose
    @NAME@ lines take the parts <kind>/runfile.sh gives after its "#@ NAME" lines, filled with values."""
    parts, name = {}, None
    for line in read(kind, "runfile.sh").splitlines(True):
        if line.startswith("#@ "):
            name = line[3:].strip()
            parts[name] = ""
        elif name:
            parts[name] += line
    script = read("nvidia-installer.sh")
    for name, part in parts.items():
        script = script.replace("@%s@\n" % name, part)
    return fill(script, values)


def read(*parts):
    with open(os.path.join(HERE, *parts)) as handle:
        return handle.read()


def put(root, relpath, content, mode=0o644):
    path = os.path.join(root, relpath.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content.encode() if isinstance(content, str) else content)
    os.chmod(path, mode)
    return path


def dpkg_deb(tree, out):
    for dirpath, dirnames, filenames in os.walk(tree):
        os.chmod(dirpath, 0o755)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", tree, out], check=True,
                   stdout=subprocess.DEVNULL)


def control(package, version, description, depends=None, relations=None):
    lines = ["Package: %s" % package, "Version: %s" % version, "Architecture: amd64",
             "Maintainer: gpuops lab <lab@gpuops.invalid>", "Section: non-free/libs", "Priority: optional"]
    if depends:
        lines.append("Depends: %s" % depends)
    lines += ["%s: %s" % item for item in sorted((relations or {}).items())]
    return "\n".join(lines + ["Description: %s" % description]) + "\n"


def deb(out, work, package, version, description, files, depends=None):
    """out/<package>_<version>_amd64.deb holding ``files``, each (path, content) or (path, content, mode)."""
    tree = os.path.join(work, "%s_%s" % (package, version))
    put(tree, "DEBIAN/control", control(package, version, description, depends=depends))
    for entry in files:
        put(tree, *entry)
    dpkg_deb(tree, os.path.join(out, "%s_%s_amd64.deb" % (package, version)))


def branch_table():
    """The catalog's driver branches as vgpu_host.py reads them: branch, vGPU release, LTS."""
    data = runpy.run_path(CATALOG_DATA)
    rows = list(data["DRIVER_BRANCHES"]) + list(data["OLDER_BRANCHES"])
    return sorted(({"branch": row["branch"], "release": int(row["vgpu_release"]), "lts": row["lts"]} for row in rows),
                  key=lambda row: row["branch"])


def driver_files(tree, fixtures, release, branches):
    """The files both forms of one GRID guest driver install."""
    version, cuda = release
    put(tree, "usr/bin/nvidia-smi", read("driver", "nvidia-smi"), 0o755)
    put(tree, "usr/bin/nvidia-gridd", read("driver", "nvidia-gridd"), 0o755)
    put(tree, "lib/systemd/system/nvidia-gridd.service", read("driver", "nvidia-gridd.service"))
    put(tree, "etc/nvidia/gridd.conf.template", read("driver", "gridd.conf.template"))
    put(tree, "usr/share/nvidia/lab/vgpu_host.py", read("driver", "vgpu_host.py"))
    put(tree, "usr/share/nvidia/lab/driver.json", json.dumps({"version": version, "cuda": cuda, "branches": branches}))
    for name, fixture in (("q-licensed.txt", FIXTURE_LICENSED), ("q-unlicensed.txt", FIXTURE_UNLICENSED)):
        with open(os.path.join(fixtures, fixture)) as handle:
            text = handle.read()
        text = re.sub(r"^(Driver Version\s+: ).*$", r"\g<1>" + version, text, flags=re.M)
        text = re.sub(r"^(CUDA Version\s+: ).*$", r"\g<1>" + cuda, text, flags=re.M)
        put(tree, "usr/share/nvidia/lab/" + name, text)


def build_driver(out, fixtures, work, release, branches):
    version = release[0]
    tree = os.path.join(work, "grid-deb-" + version)
    branch = version.split(".")[0]
    package = "%s-%s" % (GRID_PACKAGE, branch)
    others = ["%s-%s" % (GRID_PACKAGE, v.split(".")[0]) for v, _cuda in GUEST_DRIVERS if v.split(".")[0] != branch]
    put(tree, "DEBIAN/control", control(
        package, version,
        "NVIDIA GRID guest driver %s (gpuops lab stand-in)\n"
        " Stand-in for the R%s Linux guest driver: nvidia-smi prints recorded output of a GRID A100-4C\n"
        " guest; nvidia-gridd licenses against lab tokens. No kernel module." % (version, branch),
        depends="libglvnd0, python3",
        relations={"Replaces": ", ".join(others)}))
    put(tree, "DEBIAN/conffiles", "/etc/nvidia/gridd.conf.template\n")
    put(tree, "DEBIAN/postinst", "#!/bin/sh\nset -e\nif [ -d /run/systemd/system ]; then\n"
                                 "  systemctl daemon-reload\n  systemctl enable nvidia-gridd.service\n"
                                 "  systemctl restart nvidia-gridd.service\nfi\n", 0o755)
    put(tree, "DEBIAN/prerm", "#!/bin/sh\nset -e\nif [ -d /run/systemd/system ]; then\n"
                              "  systemctl disable --now nvidia-gridd.service || true\nfi\n", 0o755)
    driver_files(tree, fixtures, release, branches)
    dpkg_deb(tree, os.path.join(out, "%s_%s_amd64.deb" % (package, version)))


def build_driver_runfile(out, fixtures, work, release, branches):
    version = release[0]
    tree = os.path.join(work, "grid-run-" + version, "files")
    driver_files(tree, fixtures, release, branches)
    put(tree, "usr/bin/nvidia-uninstall",
        "#!/bin/sh\n# Removes what the lab stand-in of the GRID runfile installed.\n"
        "systemctl disable --now nvidia-gridd.service 2>/dev/null\n"
        "rm -f /usr/bin/nvidia-smi /usr/bin/nvidia-gridd /lib/systemd/system/nvidia-gridd.service "
        "/etc/nvidia/gridd.conf.template /usr/bin/nvidia-uninstall\nrm -rf /usr/share/nvidia/lab\n", 0o755)
    script = installer_script("driver", {"DRIVER_VERSION": version, "FLAVOUR_VARIABLE": ""})
    payload = base64.encodebytes(tar_gz(os.path.dirname(tree))).decode()
    put(out, "NVIDIA-Linux-x86_64-%s-grid.run" % version, script + payload, 0o755)


def build_distro_toolkit(out, work):
    deb(out, work, "nvidia-cuda-toolkit", "11.8.89~11.8.0-5~deb12u1",
        "NVIDIA CUDA development toolkit (gpuops lab stand-in)\n"
        " Named like the distribution package that pulls a non-GRID driver; it installs nothing.",
        [("usr/share/doc/nvidia-cuda-toolkit/README.lab", "Stand-in package for tests.\n")])


def tar_gz(tree):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(tree, arcname=".")
    return buffer.getvalue()


def build_runfile(out, work, release):
    version, driver, nvcc_version, year, built_on, build_id = release
    series = ".".join(version.split(".")[:2])
    values = {"CUDA_VERSION": version, "CUDA_SERIES": series, "DRIVER_VERSION": driver,
              "NVCC_VERSION": nvcc_version, "YEAR": year, "BUILT_ON": built_on, "BUILD_ID": build_id}
    tree = os.path.join(work, "cuda-%s" % version, "toolkit")
    put(tree, "bin/nvcc", fill(read("cuda", "nvcc"), values), 0o755)
    put(tree, "bin/cuda-uninstaller", "#!/bin/sh\necho 'cuda-uninstaller (gpuops lab stand-in)'\n", 0o755)
    runtime = "libcudart.so.%s" % nvcc_version
    put(tree, "lib64/" + runtime, "lab stand-in for the CUDA %s runtime\n" % version)
    os.symlink(runtime, os.path.join(tree, "lib64", "libcudart.so.%s" % version.split(".")[0]))
    os.symlink(runtime, os.path.join(tree, "lib64", "libcudart.so"))
    major, minor = version.split(".")[:2]
    put(tree, "include/cuda_runtime_api.h",
        "#define CUDART_VERSION %d\n" % (int(major) * 1000 + int(minor) * 10))
    put(tree, "share/man/man7/libcudart.7", ".TH libcudart 7\n")
    put(tree, "version.json", json.dumps({
        "cuda": {"name": "CUDA SDK", "version": version},
        "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": nvcc_version},
        "cuda_nvcc": {"name": "CUDA NVCC", "version": nvcc_version},
    }, indent=3) + "\n")
    script = fill(read("cuda", "runfile.sh"), values)
    payload = base64.encodebytes(tar_gz(os.path.dirname(tree))).decode()
    put(out, "cuda_%s_%s_linux.run" % (version, driver), script + payload, 0o755)


def cudnn_header(version):
    major, minor, patch = version.split(".")[:3]
    return ("/* cudnn_version.h: cuDNN %s (gpuops lab stand-in) */\n#ifndef CUDNN_VERSION_H_\n"
            "#define CUDNN_VERSION_H_\n\n#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n\n"
            "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\n#endif\n"
            % (version, major, minor, patch))


def build_cudnn_archive(out, work, version, cuda_major):
    name = "cudnn-linux-x86_64-%s_cuda%s-archive" % (version, cuda_major)
    tree = os.path.join(work, name)
    major = version.split(".")[0]
    put(tree, "include/cudnn_version.h", cudnn_header(version))
    put(tree, "include/cudnn.h", "#include \"cudnn_version.h\"\n")
    library = "libcudnn.so.%s" % ".".join(version.split(".")[:3])
    put(tree, "lib/" + library, "lab stand-in for cuDNN %s\n" % version)
    os.symlink(library, os.path.join(tree, "lib", "libcudnn.so.%s" % major))
    os.symlink("libcudnn.so.%s" % major, os.path.join(tree, "lib", "libcudnn.so"))
    put(tree, "LICENSE", "Stand-in archive for tests.\n")
    with tarfile.open(os.path.join(out, name + ".tar.xz"), "w:xz") as archive:
        archive.add(tree, arcname=name)


def wheel(out, distribution, version, files, tag="py3-none-manylinux1_x86_64"):
    """A minimal valid wheel (PEP 427) holding `files` ({path: text})."""
    stem = "%s-%s" % (distribution.replace("-", "_"), version)
    info = stem + ".dist-info"
    entries = dict(files)
    entries[info + "/METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: gpuops lab stand-in\n" % (
        distribution, version)
    entries[info + "/WHEEL"] = "Wheel-Version: 1.0\nGenerator: gpuops-lab\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    record = []
    for path, text in sorted(entries.items()):
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(text.encode())))
    record.append(info + "/RECORD,,")
    entries[info + "/RECORD"] = "\n".join(record) + "\n"
    path = os.path.join(out, "%s-%s.whl" % (stem, tag))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in sorted(entries.items()):
            archive.writestr(name, text)
    return path


def token(server):
    def part(data):
        return base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).rstrip(b"=").decode()
    signature = base64.urlsafe_b64encode(hashlib.sha256(server.encode()).digest()).rstrip(b"=").decode()
    return "%s.%s.%s\n" % (part({"alg": "RS256", "typ": "JWT"}),
                           part({"lab_license_server": server, "iss": "NLS"}), signature)


def pci_dump(devices):
    """`lspci -x` text for (address, vendor, device, class, subclass, revision, subsystem vendor, subsystem)."""
    blocks = []
    for address, vendor, device, klass, subclass, revision, sub_vendor, sub_device in devices:
        space = bytearray(64)
        struct.pack_into("<HHHHBBBB", space, 0, vendor, device, 0x0007, 0x0010, revision, 0, subclass, klass)
        struct.pack_into("<HH", space, 0x2C, sub_vendor, sub_device)
        lines = ["%s device" % address]
        lines += ["%02x: %s" % (offset, " ".join("%02x" % byte for byte in space[offset:offset + 16]))
                  for offset in range(0, 64, 16)]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def build_tools(out):
    tools = os.path.join(out, "tools")
    os.makedirs(tools, exist_ok=True)
    for name in ("lspci", "ffmpeg", "update-initramfs"):
        shutil.copy(os.path.join(HERE, "tools", name), os.path.join(tools, name))
        os.chmod(os.path.join(tools, name), 0o755)
    vm = [("00:00.0", 0x8086, 0x7190, 0x06, 0x00, 0x01, 0x15AD, 0x1976),   # 440BX host bridge of a VMware VM
          ("00:0f.0", 0x15AD, 0x0405, 0x03, 0x00, 0x00, 0x15AD, 0x0405)]   # VMware SVGA II
    gpu = [("02:01.0", 0x10DE, 0x20F1, 0x03, 0x02, 0xA1, 0x10DE, 0x145F)]  # A100 PCIe 40GB behind the vGPU
    put(tools, "vm-pci.dump", pci_dump(vm + gpu))
    put(tools, "vm-pci-no-gpu.dump", pci_dump(vm))
    # A bare-metal server's H100 SXM5 80GB (the recording the data center driver stand-in answers from).
    put(tools, "server-pci.dump", pci_dump([("18:00.0", 0x10DE, 0x2330, 0x03, 0x02, 0xA1, 0x10DE, 0x16C1)]))
    # A Blackwell B200 (open kernel modules only); its subsystem id is the lab's choice.
    put(tools, "server-b200-pci.dump", pci_dump([("1b:00.0", 0x10DE, 0x2901, 0x03, 0x02, 0xA1, 0x10DE, 0x1999)]))


TOOLKIT_VERSION = "1.17.8-1"
PASSTHROUGH_RECORDINGS = {"q-h100-passthrough.txt": "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt",
                          "q-l40s-passthrough.txt": "q_l40s_ada_passthrough_driver595.txt"}


def build_container_toolkit(out, work):
    deb(out, work, "nvidia-container-toolkit-base", TOOLKIT_VERSION,
        "NVIDIA Container Toolkit Base (gpuops lab stand-in)\n nvidia-ctk and nvidia-container-runtime.",
        [("usr/bin/nvidia-ctk", read("toolkit", "nvidia-ctk"), 0o755),
         ("usr/bin/nvidia-container-runtime", read("toolkit", "nvidia-container-runtime"), 0o755)])
    deb(out, work, "nvidia-container-toolkit", TOOLKIT_VERSION, "NVIDIA Container Toolkit (gpuops lab stand-in)",
        [("usr/share/doc/nvidia-container-toolkit/README.lab", "gpuops lab stand-in\n")],
        depends="nvidia-container-toolkit-base (= %s)" % TOOLKIT_VERSION)


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


def index_apt_repository(repo):
    """Packages and Release of a flat apt repository (``deb [trusted=yes] file:<repo> ./``)."""
    stanzas = []
    for name in sorted(os.listdir(repo)):
        if not name.endswith(".deb"):
            continue
        path = os.path.join(repo, name)
        fields = subprocess.run(["dpkg-deb", "-f", path], check=True, stdout=subprocess.PIPE,
                                universal_newlines=True).stdout.rstrip("\n")
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        stanzas.append("%s\nFilename: ./%s\nSize: %d\nSHA256: %s\n" % (fields, name, os.path.getsize(path), digest))
    packages = "\n".join(stanzas)
    put(repo, "Packages", packages)
    put(repo, "Release", "Origin: gpuops lab\nLabel: gpuops lab CUDA repository stand-in\nSuite: ./\n"
                         "SHA256:\n %s %d Packages\n" % (hashlib.sha256(packages.encode()).hexdigest(),
                                                         len(packages.encode())))


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


SERVERS = os.path.join(HERE, "..", "..", "servers", "standins")
# Fabric Manager versions: the lab's data center drivers, and one that matches no lab driver.
FABRIC_MANAGER_VERSIONS = ("535.161.08", "535.154.05", "580.65.06")


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--fixtures")
    args = parser.parse_args()
    fixtures = args.fixtures or find_fixtures()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="gpuops-standins.")
    try:
        branches = branch_table()
        for release in GUEST_DRIVERS:
            build_driver(args.out, fixtures, work, release, branches)
            build_driver_runfile(args.out, fixtures, work, release, branches)
        build_distro_toolkit(args.out, work)
        for release in CUDA_RELEASES:
            build_runfile(args.out, work, release)
        for version, cuda_major in CUDNN_ARCHIVES:
            build_cudnn_archive(args.out, work, version, cuda_major)
        version, cuda_major = CUDNN_WHEEL
        wheel(args.out, "nvidia-cudnn-cu%s" % cuda_major, version,
              {"nvidia/cudnn/__init__.py": "", "nvidia/cudnn/include/cudnn_version.h": cudnn_header(version)})
        wheel(args.out, "torch", "1.13.1+cu116", {"torch/__init__.py": read("torch", "__init__.py")},
              tag="py3-none-any")
        for name, server in TOKENS.items():
            put(args.out, name, token(server))
        build_tools(args.out)
        build_container_toolkit(args.out, work)
        build_passthrough_smi(args.out, fixtures)
        build_nccl(args.out, work)
        build_directpath_smi(args.out)
        build_dcgm(args.out, work)
        for release in DATACENTER_DRIVERS:
            build_datacenter_driver(args.out, fixtures, work, release)
        index_apt_repository(os.path.join(args.out, "cuda-repo"))
        build_server_standins(args.out, work)
    finally:
        shutil.rmtree(work)
    for name in sorted(os.listdir(args.out)):
        print(name)


if __name__ == "__main__":
    main()
