#!/usr/bin/env python3
"""Write ESXi offline bundles (component depots) for the lab and the tests.

An offline bundle is a zip in the layout vSphere Lifecycle Manager imports:

    index.xml                 vendor list; each vendor names its vendor index file
    vendor-index.xml          the metadata archives of that vendor, by product and version
    metadata.zip              vmware.xml (every bulletin), bulletins/<id>.xml, vibs/<vib>.xml, vendor-index.xml
    vib20/<vib>/<file>.vib    the payloads

A bulletin that carries componentNameSpec/componentVersionSpec is a component. The payloads written here are small
stand-ins (an ar archive holding the VIB descriptor): nothing in the lab installs them.

    make_bundle.py nvidia-host-driver DIR [--driver 525.105.14] [--esxi 8.0]
    make_bundle.py nvidia-gpu-mgmt-daemon DIR [--driver 525.105.14]
    make_bundle.py custom OUT.zip --component NAME=VERSION [--component ...] [--vendor NVIDIA --vendor-code NVD]

The presets print the path of the zip they wrote; the name follows NVIDIA's (<component>_<version>_<build>.zip).
"""

import argparse
import hashlib
import io
import os
import sys
import zipfile
from xml.sax.saxutils import escape, quoteattr

# ESXi build the NVIDIA host driver for ESXi 8.0 is built against, as in its version string.
ESXI_BUILDS = {"7.0": ("702", "0.0.17630552"), "8.0": ("800", "1.0.20613240")}
FIXED_TIME = (2023, 3, 28, 0, 0, 0)  # zip entry times, so the same input gives the same bytes


class Component:
    """One component (bulletin) with its VIBs."""

    def __init__(self, name, version, display_name=None, display_version=None, vendor="NVIDIA", vendor_code="NVD",
                 summary=None, description=None, release_date="2023-03-28T00:00:00", category="Enhancement",
                 urgency="Important", kb="https://docs.nvidia.com/grid/", contact="enterprisesupport@nvidia.com",
                 vibs=None, esxi="8.0"):
        self.name = name
        self.version = version
        self.display_name = display_name or name
        self.display_version = display_version or version.split("-")[0]
        self.vendor = vendor
        self.vendor_code = vendor_code
        self.summary = summary or "%s %s" % (self.display_name, self.display_version)
        self.description = description or self.summary
        self.release_date = release_date
        self.category = category
        self.urgency = urgency
        self.kb = kb
        self.contact = contact
        self.vibs = vibs or [name]
        self.esxi = esxi

    @property
    def bulletin_id(self):
        return "%s_%s" % (self.name, self.version)

    def vib_id(self, vib):
        return "%s_bootbank_%s_%s" % (self.vendor_code, vib, self.version)


def _vendor_index(esxi):
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        "<vendor>\n"
        "  <metadata>\n"
        "    <productId>embeddedEsx</productId>\n"
        "    <version>%s.0</version>\n"
        "    <locale></locale>\n"
        "    <url>metadata.zip</url>\n"
        "  </metadata>\n"
        "</vendor>\n" % esxi)


def _index(vendor, vendor_code):
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        "<vendorList>\n"
        "  <vendor>\n"
        "    <name>%s</name>\n"
        "    <code>%s</code>\n"
        "    <indexfile>vendor-index.xml</indexfile>\n"
        "    <patchUrl></patchUrl>\n"
        "    <relativePath></relativePath>\n"
        "    <content>\n"
        "      <name>VMware ESXi</name>\n"
        "      <type>http://www.vmware.com/depotmanagement/esx</type>\n"
        "    </content>\n"
        "  </vendor>\n"
        "</vendorList>\n" % (escape(vendor), escape(vendor_code)))


def _bulletin(c):
    vibs = "".join("      <vibID>%s</vibID>\n" % escape(c.vib_id(vib)) for vib in c.vibs)
    return (
        "  <bulletin>\n"
        "    <id>%s</id>\n"
        "    <vendor>%s</vendor>\n"
        "    <summary>%s</summary>\n"
        "    <severity>%s</severity>\n"
        "    <urgency>%s</urgency>\n"
        "    <category>%s</category>\n"
        "    <releaseType>extension</releaseType>\n"
        "    <description>%s</description>\n"
        "    <kbUrl>%s</kbUrl>\n"
        "    <contact>%s</contact>\n"
        "    <releaseDate>%s</releaseDate>\n"
        "    <platforms>\n"
        '      <softwarePlatform locale="" productLineID="embeddedEsx" version="%s.*"/>\n'
        "    </platforms>\n"
        "    <vibList>\n%s    </vibList>\n"
        "    <componentNameSpec name=%s uiString=%s/>\n"
        "    <componentVersionSpec version=%s uiString=%s/>\n"
        "  </bulletin>\n" % (
            escape(c.bulletin_id), escape(c.vendor), escape(c.summary), escape(c.urgency.lower()),
            escape(c.urgency), escape(c.category), escape(c.description), escape(c.kb), escape(c.contact),
            escape(c.release_date), escape(c.esxi), vibs, quoteattr(c.name), quoteattr(c.display_name),
            quoteattr(c.version), quoteattr(c.display_version)))


def _vib_descriptor(c, vib):
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<vib version="5.0">\n'
        "  <type>bootbank</type>\n"
        "  <name>%s</name>\n"
        "  <version>%s</version>\n"
        "  <vendor>%s</vendor>\n"
        "  <summary>%s</summary>\n"
        "  <release-date>%s</release-date>\n"
        "  <acceptance-level>partner</acceptance-level>\n"
        "  <system-requires><maintenance-mode>true</maintenance-mode></system-requires>\n"
        "  <live-install-allowed>false</live-install-allowed>\n"
        "  <live-remove-allowed>false</live-remove-allowed>\n"
        "</vib>\n" % (escape(vib), escape(c.version), escape(c.vendor_code), escape(c.summary),
                      escape(c.release_date)))


def _entry(name):
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _vib_path(c, vib):
    return "vib20/%s/%s.vib" % (vib, c.vib_id(vib))


def _metadata_zip(components, esxi):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as meta:
        bulletins = "".join(_bulletin(c) for c in components)
        meta.writestr(_entry("vmware.xml"), '<?xml version="1.0" encoding="utf-8"?>\n<metadataResponse>\n'
                      "  <version>3.0</version>\n  <timestamp>2023-03-28T00:00:00</timestamp>\n%s"
                      "</metadataResponse>\n" % bulletins)
        meta.writestr(_entry("vendor-index.xml"), _vendor_index(esxi))
        for c in components:
            meta.writestr(_entry("bulletins/%s.xml" % c.bulletin_id),
                          '<?xml version="1.0" encoding="utf-8"?>\n' + _bulletin(c).strip() + "\n")
            for vib in c.vibs:
                digest = hashlib.sha256(c.vib_id(vib).encode()).hexdigest()[:12]
                meta.writestr(_entry("vibs/%s-%s.xml" % (vib, digest)), _vib_descriptor(c, vib))
    return buffer.getvalue()


def _ar(members):
    """A Unix ar archive, the container format of a VIB."""
    out = [b"!<arch>\n"]
    for name, data in members:
        out.append(("%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name + "/", 0, 0, 0, "100644", len(data))).encode())
        out.append(data + (b"\n" if len(data) % 2 else b""))
    return b"".join(out)


def build_bundle(path, components, esxi="8.0"):
    """Write an offline bundle holding ``components`` (a list of Component) to ``path``; returns ``path``."""
    if not components:
        raise ValueError("an offline bundle holds at least one component")
    first = components[0]
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w") as bundle:
        bundle.writestr(_entry("index.xml"), _index(first.vendor, first.vendor_code))
        bundle.writestr(_entry("vendor-index.xml"), _vendor_index(esxi))
        bundle.writestr(_entry("metadata.zip"), _metadata_zip(components, esxi))
        for c in components:
            for vib in c.vibs:
                descriptor = _vib_descriptor(c, vib).encode()
                bundle.writestr(_entry(_vib_path(c, vib)), _ar([("descriptor.xml", descriptor)]))
    os.replace(tmp, path)
    return path


def _build_number(*parts):
    """A stable 8-digit build number for the file name, as NVIDIA's bundles carry one."""
    return str(int(hashlib.sha256("/".join(parts).encode()).hexdigest(), 16) % 10 ** 8).zfill(8)


def nvidia_host_driver(out_dir, driver="525.105.14", esxi="8.0"):
    """The vGPU host driver bundle (component ``NVD-VGPU-<esxi>``, e.g. NVD-VGPU-800); returns its path."""
    code, build = ESXI_BUILDS[esxi]
    name = "NVD-VGPU-%s" % code
    version = "%s-1OEM.%s.%s" % (driver, code, build)
    component = Component(
        name, version, display_name="NVIDIA vGPU Manager for VMware ESXi %s" % esxi, display_version=driver,
        summary="NVIDIA vGPU host driver %s for ESXi %s" % (driver, esxi),
        vibs=["NVD-VMware_ESXi_%s.0_Driver" % esxi], esxi=esxi)
    filename = "%s_%s_%s.zip" % (name, version, _build_number(name, version))
    return build_bundle(os.path.join(out_dir, filename), [component], esxi=esxi)


def nvidia_gpu_mgmt_daemon(out_dir, driver="525.105.14", esxi="8.0"):
    """The GPU management daemon bundle (component ``nvd-gpu-mgmt-daemon``); returns its path."""
    name = "nvd-gpu-mgmt-daemon"
    version = "%s-0.0.0000" % driver
    component = Component(
        name, version, display_name="NVIDIA GPU Management Daemon", display_version=driver,
        summary="NVIDIA GPU management daemon %s" % driver, vibs=["nvd-gpu-mgmt-daemon"], esxi=esxi)
    filename = "%s_%s_%s.zip" % (name, version, _build_number(name, version))
    return build_bundle(os.path.join(out_dir, filename), [component], esxi=esxi)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="kind", required=True)
    for kind in ("nvidia-host-driver", "nvidia-gpu-mgmt-daemon"):
        preset = sub.add_parser(kind)
        preset.add_argument("out_dir")
        preset.add_argument("--driver", default="525.105.14", help="NVIDIA driver version")
        preset.add_argument("--esxi", default="8.0", choices=sorted(ESXI_BUILDS))
    custom = sub.add_parser("custom")
    custom.add_argument("out")
    custom.add_argument("--component", action="append", required=True, metavar="NAME=VERSION")
    custom.add_argument("--vendor", default="NVIDIA")
    custom.add_argument("--vendor-code", default="NVD")
    custom.add_argument("--esxi", default="8.0", choices=sorted(ESXI_BUILDS))
    args = parser.parse_args(argv)
    if args.kind == "nvidia-host-driver":
        path = nvidia_host_driver(args.out_dir, args.driver, args.esxi)
    elif args.kind == "nvidia-gpu-mgmt-daemon":
        path = nvidia_gpu_mgmt_daemon(args.out_dir, args.driver, args.esxi)
    else:
        components = []
        for spec in args.component:
            name, sep, version = spec.partition("=")
            if not sep or not name or not version:
                parser.error("--component takes NAME=VERSION, got %r" % spec)
            components.append(Component(name, version, vendor=args.vendor, vendor_code=args.vendor_code,
                                        esxi=args.esxi))
        path = build_bundle(args.out, components, esxi=args.esxi)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
