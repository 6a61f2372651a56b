# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Option specs that several modules share, each documented by the doc fragment of the same name.

- ``vcenter_connection()``: ``gpuops.vgpu.vcenter`` (every vCenter and vLCM module).
- ``redfish_connection()``: ``gpuops.vgpu.redfish`` (every BMC module).
- ``host_scope()``: ``gpuops.vgpu.host_scope`` (modules that act on the hosts of a cluster or a list of hosts).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import env_fallback


def vcenter_connection():
    return dict(
        hostname=dict(type="str", required=True, fallback=(env_fallback, ["VMWARE_HOST"])),
        username=dict(type="str", required=True, aliases=["user"], fallback=(env_fallback, ["VMWARE_USER"])),
        password=dict(type="str", required=True, aliases=["pass", "pwd"], no_log=True,
                      fallback=(env_fallback, ["VMWARE_PASSWORD"])),
        port=dict(type="int", default=443, fallback=(env_fallback, ["VMWARE_PORT"])),
        validate_certs=dict(type="bool", default=True, fallback=(env_fallback, ["VMWARE_VALIDATE_CERTS"])),
    )


def redfish_connection():
    return dict(
        baseuri=dict(type="str", required=True),
        username=dict(type="str", required=True, aliases=["user"]),
        password=dict(type="str", required=True, no_log=True, aliases=["pass"]),
        validate_certs=dict(type="bool", default=True),
        auth=dict(type="str", default="session", choices=["session", "basic"]),
        timeout=dict(type="int", default=30),
        retries=dict(type="int", default=3),
    )


def host_scope():
    return dict(
        cluster=dict(type="str"),
        esxi_hostnames=dict(type="list", elements="str"),
        datacenter=dict(type="str"),
    )


def vcenter_spec(*parts, **options):
    """The vCenter connection, then each of ``parts`` (dicts of option specs), then ``options``."""
    spec = vcenter_connection()
    for part in parts:
        spec.update(part)
    spec.update(options)
    return spec


def redfish_spec(**options):
    spec = redfish_connection()
    spec.update(options)
    return spec
