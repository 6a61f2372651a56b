#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: record_file
short_description: Read or write a record the collection keeps between runs, refusing a damaged one
version_added: 0.1.0
description:
  - Reads a JSON record from a file, or writes one, on the host the task runs on (the controller, where the task is
    delegated to C(localhost)). The roles keep their records through this module (the DRS/DPM snapshot of the
    C(cluster_vgpu) role, the doctor's report, the fleet report).
  - A read refuses a record that is empty, cut short, not a JSON object or without one of O(required_keys), before
    anything else runs, with a message that names the file and what to do (O(fix)).
  - A write is atomic and durable. It goes to a temporary file in the same directory, is synced to disk and renamed
    over the record, so a run killed at any moment leaves the old record or the new one, never a part of either.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.attributes
attributes:
  check_mode:
    support: full
    details: A read runs as usual; a write reports whether the file would change and writes nothing.
  diff_mode:
    support: full
    details: The file's text before and after a write.
options:
  path:
    description:
      - The record's file. A write creates a missing directory, searchable by those O(mode) lets read the file
        (0700 for a file of mode 0600, 0755 for 0644).
    type: path
    required: true
  data:
    description:
      - Write this JSON object as the record (indented, keys sorted, as C(to_nice_json) writes it).
      - Without O(data) or O(content) the module reads the record.
    type: dict
  content:
    description:
      - Write this text as the file (for a record that is not JSON, such as an HTML report).
    type: str
  required_keys:
    description:
      - Keys a record must have; one missing makes it damaged.
    type: list
    elements: str
    default: []
  missing:
    description:
      - What a read does when the file does not exist. V(ok) returns RV(exists=false) and an empty RV(data);
        V(fail) fails with O(fix).
    type: str
    choices: [ok, fail]
    default: ok
  fix:
    description:
      - What the user should do about a damaged or missing record, for the message; C(%s) stands for the path.
      - The default tells to move the file aside and run again, right where the run writes the record anew.
    type: str
  mode:
    description:
      - Permissions of a written file, as an octal string.
    type: str
    default: "0600"
notes:
  - Reads and writes the file where the task runs; records the collection keeps live on the controller.
  - Where the task runs on the controller (a local connection without become, as C(delegate_to=localhost) gives),
    its action plugin reads or writes the record in the controller's own process, with the same options and checks,
    instead of starting the module with the whole record in its arguments.
"""

EXAMPLES = r"""
- name: Read the DRS/DPM snapshot
  gpuops.vgpu.record_file:
    path: "{{ playbook_dir }}/.cluster_vgpu/vc01_gpu-cluster.json"
    required_keys: [state, previous]
    fix: Check DRS/DPM of the cluster in vCenter, set them with gpuops.vgpu.cluster_automation, then delete %s.
  delegate_to: localhost
  register: snapshot

- name: Write it back, marked restored
  gpuops.vgpu.record_file:
    path: "{{ playbook_dir }}/.cluster_vgpu/vc01_gpu-cluster.json"
    data: "{{ snapshot.data | combine({'state': 'restored'}) }}"
  delegate_to: localhost
"""

RETURN = r"""
exists:
  description: Whether the record exists (after a write, always true; in check mode, as it would).
  returned: always
  type: bool
data:
  description: The record read, or the one written; an empty dict when there is none.
  returned: always
  type: dict
path:
  description: The record's file.
  returned: always
  type: str
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils._records import reconcile


MUTUALLY_EXCLUSIVE = [["data", "content"]]


def argument_spec():
    return dict(
        path=dict(type="path", required=True),
        data=dict(type="dict"),
        content=dict(type="str"),
        required_keys=dict(type="list", elements="str", default=[], no_log=False),
        missing=dict(type="str", choices=["ok", "fail"], default="ok"),
        fix=dict(type="str"),
        mode=dict(type="str", default="0600"),
    )


def main():
    run_module(argument_spec(), reconcile, supports_check_mode=True, mutually_exclusive=MUTUALLY_EXCLUSIVE)


if __name__ == "__main__":
    main()
