# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The forms the lab's stand-ins are packed in, as NVIDIA's and Debian's tools write them: Debian packages and a
flat apt repository (dpkg-deb), tarballs, wheels (PEP 427), a runfile's installer script, and ``lspci -x``
configuration-space dumps; reading the stand-ins' sources in this folder."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import struct
import subprocess
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


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


def control(package, version, description, depends=None, relations=None):
    lines = ["Package: %s" % package, "Version: %s" % version, "Architecture: amd64",
             "Maintainer: gpuops lab <lab@gpuops.invalid>", "Section: non-free/libs", "Priority: optional"]
    if depends:
        lines.append("Depends: %s" % depends)
    lines += ["%s: %s" % item for item in sorted((relations or {}).items())]
    return "\n".join(lines + ["Description: %s" % description]) + "\n"


def dpkg_deb(tree, out):
    for dirpath, dirnames, filenames in os.walk(tree):
        os.chmod(dirpath, 0o755)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", tree, out], check=True,
                   stdout=subprocess.DEVNULL)


def deb(out, work, package, version, description, files, depends=None):
    """out/<package>_<version>_amd64.deb holding ``files``, each (path, content) or (path, content, mode)."""
    tree = os.path.join(work, "%s_%s" % (package, version))
    put(tree, "DEBIAN/control", control(package, version, description, depends=depends))
    for entry in files:
        put(tree, *entry)
    dpkg_deb(tree, os.path.join(out, "%s_%s_amd64.deb" % (package, version)))


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


def tar_gz(tree):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(tree, arcname=".")
    return buffer.getvalue()


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
