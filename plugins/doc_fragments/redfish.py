# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  baseuri:
    description:
      - The BMC (iDRAC, iLO, Supermicro BMC, any Redfish service) as V(https://host[:port]) or a bare host such as
        V(10.0.0.21) or V(bmc01.example.com:8443).
      - The Redfish service root and every resource below it are found by following links; give no path.
    type: str
    required: true
  username:
    description:
      - BMC user, for example V(root) on an iDRAC.
    type: str
    required: true
    aliases: [user]
  password:
    description:
      - Password of O(username). Never shown in output or logs.
    type: str
    required: true
    aliases: [pass]
  validate_certs:
    description:
      - Verify the BMC's TLS certificate.
      - Set to V(false) only for BMCs with self-signed certificates you accept; to trust a private CA, point
        E(SSL_CERT_FILE) at its bundle instead.
    type: bool
    default: true
  auth:
    description:
      - V(session) opens a Redfish session (C(X-Auth-Token)) and deletes it at the end; BMCs without a session
        service are then reached with basic auth.
      - V(basic) sends the credentials with every request.
    type: str
    choices: [session, basic]
    default: session
  timeout:
    description:
      - Seconds to wait for each answer of the BMC.
    type: int
    default: 30
  retries:
    description:
      - How many times a request is repeated when the BMC answers HTTP 503 or 429 or cannot be reached, with
        growing pauses (1, 2, 4 ... seconds, or what the BMC's C(Retry-After) header asks for, at most 60).
      - Requests that may have reached the BMC are repeated only when repeating them is harmless.
    type: int
    default: 3
notes:
  - All modules that talk to a BMC are in the C(gpuops.vgpu.redfish) action group, so a play can set the
    connection options once with C(module_defaults).
  - Requests go straight to the BMC; proxy environment variables are not used for BMC management networks.
"""
