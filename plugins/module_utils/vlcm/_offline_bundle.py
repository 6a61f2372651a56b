# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reads an ESXi offline bundle on the controller: which components and versions it carries, from whom, of when.

An offline bundle is a zip holding ``index.xml`` (the vendors, each naming its vendor index file), the vendor index
(naming one or more metadata archives) and the metadata archives (``metadata.zip``: ``vmware.xml`` or
``bulletins/*.xml``). A bulletin with ``componentNameSpec`` and ``componentVersionSpec`` is a component. Only the
metadata is read, never the payloads, so a bundle of hundreds of megabytes is read in milliseconds.
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os
import posixpath
import zipfile
import xml.etree.ElementTree as ET

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

MAX_METADATA_BYTES = 64 * 1024 * 1024
CATEGORIES = ("SECURITY", "ENHANCEMENT", "BUGFIX", "RECALL", "RECALL_FIX", "INFO", "MISC", "GENERAL")
URGENCIES = ("CRITICAL", "IMPORTANT", "MODERATE", "LOW", "GENERAL")
HINT = "Download the bundle again and check it is the complete offline bundle (zip), not a single VIB or a README."


class BundleError(Exception):
    """What is wrong inside a bundle; read_bundle turns it into an InputError naming the file."""


def read_bundle(path):
    """Components of the offline bundle at ``path``.

    Returns a dict: ``file_name``, ``size``, ``vendors`` (names, in index order) and ``components`` (dicts with
    ``name``, ``version``, ``display_name``, ``display_version``, ``vendor``, ``summary``, ``release_date``,
    ``category``, ``urgency``, ``bulletin``, ``vibs``), in bundle order. Raises ``InputError`` naming the file and
    the problem when it is missing, not a zip or not an offline bundle.
    """
    if not os.path.isfile(path):
        raise InputError("Offline bundle %s does not exist on the controller." % path,
                         hint="Check the path (src is a file on the controller, location the URL vCenter reads).")
    try:
        with zipfile.ZipFile(path) as archive:
            vendors, components = _read(archive)
    except (zipfile.BadZipFile, BundleError, OSError, EOFError) as err:
        raise InputError("%s is not a valid ESXi offline bundle: %s." % (path, err), hint=HINT)
    return {
        "file_name": os.path.basename(path),
        "size": os.path.getsize(path),
        "vendors": vendors,
        "components": components,
    }


def _read(archive):
    files = dict((_clean(info.filename), info) for info in archive.infolist())
    index = _xml(archive, files, "index.xml", "the bundle")
    vendor_elements = index.findall("vendor")
    if not vendor_elements:
        raise BundleError("index.xml lists no vendor")
    vendors, components, seen = [], [], set()
    for vendor in vendor_elements:
        vendors.append(_text(vendor, "name"))
        index_file = _text(vendor, "indexfile") or "vendor-index.xml"
        index_path = _clean(posixpath.join(_text(vendor, "relativePath"), index_file))
        for metadata in _xml(archive, files, index_path, "index.xml").findall("metadata"):
            meta_path = _clean(posixpath.join(posixpath.dirname(index_path), _text(metadata, "url")))
            for component in _metadata(archive, files, meta_path, index_path):
                key = (component["name"], component["version"])
                if key not in seen:
                    seen.add(key)
                    components.append(component)
    if not components:
        raise BundleError("it holds no component (no bulletin carries componentNameSpec and componentVersionSpec)")
    return vendors, components


def _clean(path):
    return posixpath.normpath("/" + path).lstrip("/")


def _read_member(archive, files, name, named_by):
    info = files.get(name)
    if info is None:
        raise BundleError("%s, named by %s, is missing" % (name, named_by))
    if info.file_size > MAX_METADATA_BYTES:
        raise BundleError("%s is %d bytes, more than metadata ever takes" % (name, info.file_size))
    return archive.read(info)


def _parse(data, name):
    try:
        return ET.fromstring(data)
    except ET.ParseError as err:
        raise BundleError("%s is not valid XML (%s)" % (name, err))


def _xml(archive, files, name, named_by):
    return _parse(_read_member(archive, files, name, named_by), name)


def _metadata(archive, files, name, named_by):
    data = _read_member(archive, files, name, named_by)
    try:
        meta = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as err:
        raise BundleError("%s is not a zip archive (%s)" % (name, err))
    with meta:
        meta_files = dict((_clean(info.filename), info) for info in meta.infolist())
        if "vmware.xml" in meta_files:
            bulletins = _xml(meta, meta_files, "vmware.xml", name).findall("bulletin")
        else:
            names = sorted(n for n in meta_files if n.startswith("bulletins/") and n.endswith(".xml"))
            if not names:
                raise BundleError("%s has neither vmware.xml nor bulletins/*.xml" % name)
            bulletins = [_xml(meta, meta_files, n, name) for n in names]
    return [c for c in (_component(b) for b in bulletins) if c is not None]


def _component(bulletin):
    name_spec = bulletin.find("componentNameSpec")
    version_spec = bulletin.find("componentVersionSpec")
    if name_spec is None or version_spec is None:
        return None
    name, version = name_spec.get("name", "").strip(), version_spec.get("version", "").strip()
    if not name or not version:
        return None
    return {
        "name": name,
        "version": version,
        "display_name": name_spec.get("uiString", "").strip() or name,
        "display_version": version_spec.get("uiString", "").strip() or version,
        "vendor": _text(bulletin, "vendor"),
        "summary": _text(bulletin, "summary"),
        "release_date": _text(bulletin, "releaseDate"),
        "category": _enum(_text(bulletin, "category"), CATEGORIES),
        "urgency": _enum(_text(bulletin, "urgency") or _text(bulletin, "severity"), URGENCIES),
        "bulletin": _text(bulletin, "id"),
        "vibs": [(vib.text or "").strip() for vib in bulletin.findall("vibList/vibID")],
    }


def _text(element, path):
    found = element.find(path)
    return (found.text or "").strip() if found is not None else ""


def _enum(word, allowed):
    value = word.strip().upper().replace("-", "_")
    value = "RECALL_FIX" if value == "RECALLFIX" else value
    return value if value in allowed else "GENERAL"
