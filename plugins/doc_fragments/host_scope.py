# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options of module_utils/_argument_specs.host_scope().
    DOCUMENTATION = r"""
options:
  cluster:
    description:
      - The hosts of this cluster.
    type: str
  esxi_hostnames:
    description:
      - These hosts, by their names in vCenter. Results list them in this order; without this option, by name.
      - With O(cluster), every named host must be in that cluster.
    type: list
    elements: str
  datacenter:
    description:
      - Only hosts of this datacenter; also tells apart clusters of the same name.
    type: str
"""
