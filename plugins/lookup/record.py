# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: record
short_description: Read records the collection keeps on the controller, refusing a damaged one
version_added: 0.1.0
description:
  - Returns, for each path, the JSON record it holds, or V(null) where there is no file - the same read as
    M(gpuops.vgpu.record_file) without O(gpuops.vgpu.record_file#module:data), with the same refusal of a record that
    is empty, cut short, not a JSON object or without one of O(required_keys), but on the controller and without
    starting a module, so a role that reads several records before deciding anything pays nothing for it.
author:
  - gpuops maintainers (@gpuops)
options:
  _terms:
    description: Paths of the records, on the controller.
    type: list
    elements: path
    required: true
  required_keys:
    description: Keys a record must have; one missing makes it damaged.
    type: list
    elements: str
    default: []
  fix:
    description:
      - What the user should do about a damaged record, for the message; C(%s) stands for the path.
    type: str
notes:
  - Use it with C(query) (or C(wantlist=true)) to get one entry per path, V(null) included.
"""

EXAMPLES = r"""
- name: The DRS/DPM records older versions of cluster_vgpu kept, one per cluster (null where none)
  ansible.builtin.set_fact:
    records: >-
      {{ query('gpuops.vgpu.record', *paths, required_keys=['cluster', 'state', 'previous'],
               fix='Check DRS and DPM, then delete %s and run again.') }}
"""

RETURN = r"""
_list:
  description: One record (a dict) per path, or V(null) where the file does not exist.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.module_utils._records import read_record


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        required, fix = self.get_option("required_keys"), self.get_option("fix")
        records = []
        for path in terms:
            try:
                records.append(read_record(path, required, fix))
            except GpuopsError as err:
                raise AnsibleLookupError(str(err))
        return records
