# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  hostname:
    description:
      - Name or address of the vCenter Server.
      - Falls back to the E(VMWARE_HOST) environment variable.
    type: str
    required: true
  username:
    description:
      - vCenter user, for example V(administrator@vsphere.local).
      - Falls back to the E(VMWARE_USER) environment variable.
    type: str
    required: true
    aliases: [user]
  password:
    description:
      - Password of O(username). Never shown in output or logs.
      - Falls back to the E(VMWARE_PASSWORD) environment variable.
    type: str
    required: true
    aliases: [pass, pwd]
  port:
    description:
      - HTTPS port of the vCenter Server.
      - Falls back to the E(VMWARE_PORT) environment variable.
    type: int
    default: 443
  validate_certs:
    description:
      - Verify the vCenter Server's TLS certificate.
      - Set to V(false) only for labs with self-signed certificates; to trust a private CA, point E(SSL_CERT_FILE)
        or E(REQUESTS_CA_BUNDLE) at its bundle instead.
      - Falls back to the E(VMWARE_VALIDATE_CERTS) environment variable.
    type: bool
    default: true
notes:
  - All modules that talk to vCenter are in the C(gpuops.vgpu.vcenter) action group, so a play can set the
    connection options once with C(module_defaults).
"""
