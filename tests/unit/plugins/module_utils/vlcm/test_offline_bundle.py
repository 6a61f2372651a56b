# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline bundle metadata, read from bundles the lab's bundle builder writes in the real layout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os
import sys
import zipfile

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._offline_bundle import read_bundle

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "lab", "tools"))
import make_bundle  # noqa: E402  pylint: disable=wrong-import-position


def test_nvidia_host_driver_bundle(tmp_path):
    path = make_bundle.nvidia_host_driver(str(tmp_path), driver="525.105.14", esxi="8.0")
    bundle = read_bundle(path)
    assert bundle["file_name"] == os.path.basename(path)
    assert bundle["file_name"].startswith("NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240_")
    assert bundle["size"] == os.path.getsize(path)
    assert bundle["vendors"] == ["NVIDIA"]
    [component] = bundle["components"]
    assert component["name"] == "NVD-VGPU-800"
    assert component["version"] == "525.105.14-1OEM.800.1.0.20613240"
    assert component["display_version"] == "525.105.14"
    assert component["display_name"] == "NVIDIA vGPU Manager for VMware ESXi 8.0"
    assert component["vendor"] == "NVIDIA"
    assert component["release_date"] == "2023-03-28T00:00:00"
    assert (component["category"], component["urgency"]) == ("ENHANCEMENT", "IMPORTANT")
    assert component["bulletin"] == "NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240"
    assert component["vibs"] == ["NVD_bootbank_NVD-VMware_ESXi_8.0.0_Driver_525.105.14-1OEM.800.1.0.20613240"]


def test_gpu_management_daemon_and_esxi_7(tmp_path):
    daemon = read_bundle(make_bundle.nvidia_gpu_mgmt_daemon(str(tmp_path), driver="535.54.06"))
    assert [(c["name"], c["version"]) for c in daemon["components"]] == [("nvd-gpu-mgmt-daemon", "535.54.06-0.0.0000")]
    driver = read_bundle(make_bundle.nvidia_host_driver(str(tmp_path), driver="525.105.14", esxi="7.0"))
    assert [(c["name"], c["version"]) for c in driver["components"]] == [
        ("NVD-VGPU-702", "525.105.14-1OEM.702.0.0.17630552")]


def test_several_components_in_bundle_order(tmp_path):
    path = make_bundle.build_bundle(str(tmp_path / "multi.zip"), [
        make_bundle.Component("B-driver", "2.0-1", category="BugFix", urgency="Critical"),
        make_bundle.Component("A-tools", "1.5", vendor="Acme", vendor_code="ACM", category="Security"),
    ])
    components = read_bundle(path)["components"]
    assert [(c["name"], c["version"], c["category"], c["urgency"]) for c in components] == [
        ("B-driver", "2.0-1", "BUGFIX", "CRITICAL"), ("A-tools", "1.5", "SECURITY", "IMPORTANT")]
    assert components[1]["vendor"] == "Acme"


def _rewrite(path, out, drop=(), replace=None):
    """Copy the bundle at ``path`` to ``out`` without the members in ``drop`` and with ``replace`` (name: bytes)."""
    replace = replace or {}
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename in drop:
                continue
            dst.writestr(info.filename, replace.pop(info.filename, None) or src.read(info))
        for name, data in replace.items():
            dst.writestr(name, data)
    return out


def _metadata_without(path, drop):
    with zipfile.ZipFile(path) as src:
        meta = src.read("metadata.zip")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(meta)) as old, zipfile.ZipFile(out, "w") as new:
        for info in old.infolist():
            if not any(info.filename.startswith(prefix) for prefix in drop):
                new.writestr(info.filename, old.read(info))
    return out.getvalue()


def test_bulletin_files_without_vmware_xml(tmp_path):
    good = make_bundle.nvidia_host_driver(str(tmp_path))
    path = _rewrite(good, str(tmp_path / "bulletins-only.zip"),
                    replace={"metadata.zip": _metadata_without(good, ["vmware.xml"])})
    assert [c["name"] for c in read_bundle(path)["components"]] == ["NVD-VGPU-800"]


@pytest.mark.parametrize("mutation, words", [
    ({"drop": ["index.xml"]}, ["index.xml, named by the bundle, is missing"]),
    ({"drop": ["vendor-index.xml"]}, ["vendor-index.xml, named by index.xml, is missing"]),
    ({"drop": ["metadata.zip"]}, ["metadata.zip, named by vendor-index.xml, is missing"]),
    ({"replace": {"index.xml": b"<vendorList><vendor>"}}, ["index.xml is not valid XML"]),
    ({"replace": {"index.xml": b"<vendorList/>"}}, ["index.xml lists no vendor"]),
    ({"replace": {"metadata.zip": b"not a zip"}}, ["metadata.zip is not a zip archive"]),
    ({"metadata_drop": ["vmware.xml", "bulletins/"]}, ["has neither vmware.xml nor bulletins/*.xml"]),
])
def test_broken_bundles_name_the_problem(tmp_path, mutation, words):
    good = make_bundle.nvidia_host_driver(str(tmp_path))
    replace = dict(mutation.get("replace", {}))
    if "metadata_drop" in mutation:
        replace["metadata.zip"] = _metadata_without(good, mutation["metadata_drop"])
    path = _rewrite(good, str(tmp_path / "broken.zip"), drop=mutation.get("drop", ()), replace=replace)
    with pytest.raises(InputError) as err:
        read_bundle(path)
    assert "broken.zip is not a valid ESXi offline bundle" in err.value.message
    for word in words:
        assert word in err.value.message
    assert "offline bundle (zip)" in err.value.hint


def test_bundle_without_components(tmp_path):
    good = make_bundle.nvidia_host_driver(str(tmp_path))
    meta = io.BytesIO()
    with zipfile.ZipFile(meta, "w") as new:
        new.writestr("vmware.xml", "<metadataResponse><bulletin><id>legacy-patch</id></bulletin></metadataResponse>")
    path = _rewrite(good, str(tmp_path / "legacy.zip"), replace={"metadata.zip": meta.getvalue()})
    with pytest.raises(InputError) as err:
        read_bundle(path)
    assert "holds no component" in err.value.message


def test_not_a_zip_and_missing_file(tmp_path):
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"PK\x03\x04 truncated download")
    with pytest.raises(InputError) as err:
        read_bundle(str(corrupt))
    assert "corrupt.zip is not a valid ESXi offline bundle" in err.value.message
    with pytest.raises(InputError) as err:
        read_bundle(str(tmp_path / "absent.zip"))
    assert "does not exist on the controller" in err.value.message


def test_builder_is_deterministic(tmp_path):
    first = make_bundle.nvidia_host_driver(str(tmp_path / "a"))
    second = make_bundle.nvidia_host_driver(str(tmp_path / "b"))
    with open(first, "rb") as a, open(second, "rb") as b:
        assert a.read() == b.read()
