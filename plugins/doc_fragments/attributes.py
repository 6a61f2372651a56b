# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying the target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
"""

    INFO_MODULE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details: This module only reads, so check mode changes nothing about what it does.
    description: Can run in check mode and return changed status prediction without modifying the target.
  diff_mode:
    support: N/A
    details: This module never changes anything.
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
"""

    ACTION_GROUP_VCENTER = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/gpuops.vgpu.vcenter) in C(module_defaults) to set connection options for all vCenter modules.
    support: full
    membership:
      - gpuops.vgpu.vcenter
"""

    ACTION_GROUP_REDFISH = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/gpuops.vgpu.redfish) in C(module_defaults) to set connection options for all BMC modules.
    support: full
    membership:
      - gpuops.vgpu.redfish
"""
