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
- the stand-ins of NVIDIA's data center stack (datacenter_stack.py says which): the data center driver and its
  CUDA repository, DCGM, NCCL and nccl-tests, Fabric Manager, and the nvidia-smi of passthrough guests and of the
  lab's bare-metal servers.

Only the Python standard library and dpkg-deb are needed; packing.py writes the packages, archives and dumps.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import runpy
import shutil
import tarfile
import tempfile

import datacenter_stack
from packing import HERE, control, deb, dpkg_deb, fill, installer_script, pci_dump, put, read, tar_gz, wheel

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
CUDNN_ARCHIVES = (("8.9.7.29", "11"), ("9.1.0.70", "12"))
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


def token(server):
    def part(data):
        return base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).rstrip(b"=").decode()
    signature = base64.urlsafe_b64encode(hashlib.sha256(server.encode()).digest()).rstrip(b"=").decode()
    return "%s.%s.%s\n" % (part({"alg": "RS256", "typ": "JWT"}),
                           part({"lab_license_server": server, "iss": "NLS"}), signature)


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


def build_container_toolkit(out, work):
    deb(out, work, "nvidia-container-toolkit-base", TOOLKIT_VERSION,
        "NVIDIA Container Toolkit Base (gpuops lab stand-in)\n nvidia-ctk and nvidia-container-runtime.",
        [("usr/bin/nvidia-ctk", read("toolkit", "nvidia-ctk"), 0o755),
         ("usr/bin/nvidia-container-runtime", read("toolkit", "nvidia-container-runtime"), 0o755)])
    deb(out, work, "nvidia-container-toolkit", TOOLKIT_VERSION, "NVIDIA Container Toolkit (gpuops lab stand-in)",
        [("usr/share/doc/nvidia-container-toolkit/README.lab", "gpuops lab stand-in\n")],
        depends="nvidia-container-toolkit-base (= %s)" % TOOLKIT_VERSION)


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
        datacenter_stack.build(args.out, fixtures, work)
    finally:
        shutil.rmtree(work)
    for name in sorted(os.listdir(args.out)):
        print(name)


if __name__ == "__main__":
    main()
