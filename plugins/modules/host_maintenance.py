#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_maintenance
short_description: Put ESXi hosts into maintenance mode, take them out, or reboot them
version_added: 0.1.0
description:
  - Puts the hosts of a cluster, or named hosts, into maintenance mode (O(state=present)) or takes them out
    (O(state=absent)). Hosts already as asked are left alone.
  - Powered-on VMs keep a host from entering maintenance mode unless vCenter can move them itself (the host is in a
    cluster with fully automated DRS); with O(evacuate_powered_off_vms=true), powered-off VMs do too unless DRS is
    on. Such hosts fail the module before any host changes, naming the VMs per host.
  - A host that still does not enter is reported with the powered-on VMs left on it.
  - O(state=rebooted) reboots each host, one at a time, through vCenter (C(RebootHost_Task), never forced). Into
    maintenance mode by the rules above unless it is there already, reboot, wait until vCenter sees the host
    connected again with a new boot time (up to O(reboot_timeout)), and out of maintenance mode if the module put
    it there. Every run reboots (like C(ansible.builtin.reboot)); VMs that keep a host from maintenance mode fail
    the module before any host changes. The host's VMs stay where vSphere leaves them, powered off.
author:
  - gpuops maintainers (@gpuops)
requirements:
  - pyvmomi >= 8.0.3.0
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.host_scope
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
attributes:
  check_mode:
    support: full
    details: Reads the hosts and their VMs and reports what would change, failing where the real run would be refused;
      O(state=rebooted) reports every host as rebooted without rebooting it.
  diff_mode:
    support: full
    details: Maintenance mode of each changed host before and after.
options:
  state:
    description:
      - V(present) puts the hosts into maintenance mode, V(absent) takes them out, V(rebooted) reboots them and
        leaves them in maintenance mode as they were before.
    type: str
    choices: [present, absent, rebooted]
    default: present
  timeout:
    description:
      - Seconds vCenter may take per host to enter or exit maintenance mode (including moving VMs off it) before
        the task fails.
    type: int
    default: 1800
  reboot_timeout:
    description:
      - With O(state=rebooted), seconds a host may take from the reboot until vCenter sees it connected again.
        When it passes the module fails naming the host, which stays in maintenance mode.
    type: int
    default: 1200
  evacuate_powered_off_vms:
    description:
      - Also move powered-off VMs off the hosts; vCenter does that only in a cluster with DRS on.
      - Only used with O(state=present) and O(state=rebooted).
    type: bool
    default: false
  parallel:
    description:
      - V(false) handles one host at a time and stops at the first host that fails. V(true) starts every host at
        once and waits for them together; use it only when the cluster can spare all those hosts.
    type: bool
    default: false
  owner:
    description:
      - Who the hosts go into maintenance mode for (a layer of work, such as V(bios)), kept in vCenter so that a
        later run from any controller knows which hosts to take out.
      - With O(state=present), each host the module puts into maintenance mode gets a record in its custom
        attribute C(gpuops.vgpu.maintenance) (the owner, the run, who ran it, vCenter's time) before it enters;
        a host already in maintenance mode gets none.
      - With O(state=absent), only hosts whose record names this owner come out, and their record is cleared;
        hosts in maintenance mode for anyone else stay in and are listed in RV(kept). A record left on a host that
        is out of maintenance mode already is cleared (RV(records_cleared)).
      - A host that a person took out of maintenance mode since the record (an C(ExitMaintenanceModeEvent) in
        vCenter by a user, newer than the record) is left as the person left it, in or out of maintenance mode;
        its record is cleared and RV(changed_by_person) names it. vCenter's own events (no user) do not count.
      - A record that cannot be trusted (cut short, edited, taken on another vCenter) fails the module before any
        change, naming the host and the fix.
      - Not used with O(state=rebooted).
    type: str
  run_id:
    description:
      - The run named in the records O(owner) writes; made from the time and the process id when not given.
    type: str
notes:
  - One of O(cluster) and O(esxi_hostnames) is required.
  - With O(parallel=false), hosts are handled in the order of RV(hosts).
"""

EXAMPLES = r"""
- name: One host into maintenance mode for a BIOS change
  gpuops.vgpu.host_maintenance:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    esxi_hostnames:
      - esxi-02.lab.local
    state: present
    timeout: 900

- name: Every host of the cluster back in service, all at once
  module_defaults:
    group/gpuops.vgpu.vcenter:
      hostname: "{{ vcenter_hostname }}"
      port: "{{ vcenter_port }}"
      username: "{{ vcenter_username }}"
      password: "{{ vcenter_password }}"
      validate_certs: "{{ vcenter_validate_certs }}"
  gpuops.vgpu.host_maintenance:
    cluster: gpu-cluster
    state: absent
    parallel: true

- name: Reboot a host, so that a PCI passthrough change waiting for it takes effect
  gpuops.vgpu.host_maintenance:
    esxi_hostnames:
      - esxi-31.lab.local
    state: rebooted
    reboot_timeout: 900
"""

RETURN = r"""
hosts:
  description: One entry per selected host, sorted by name unless O(esxi_hostnames) gives the order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Host name in vCenter.
      type: str
    changed:
      description: Whether the host entered or left maintenance mode (would, in check mode).
      type: bool
    before:
      description: C(maintenance_mode) before (and, with O(state=rebooted), C(boot_time)).
      type: dict
      sample: {"maintenance_mode": false}
    after:
      description: C(maintenance_mode) after (and, with O(state=rebooted), C(boot_time), null in check mode).
      type: dict
      sample: {"maintenance_mode": true}
    rebooted:
      description: With O(state=rebooted), whether the host was rebooted (would be, in check mode).
      type: bool
      returned: when O(state=rebooted)
    entered_maintenance:
      description: With O(state=rebooted), whether the module put the host into maintenance mode for the reboot
        (and took it out after).
      type: bool
      returned: when O(state=rebooted)
    maintenance_owner:
      description: With O(owner), the owner the host's maintenance record names after the run (would, in check
        mode), null for none.
      type: str
      returned: when O(owner) is given
kept:
  description: With O(owner) and O(state=absent), hosts left in maintenance mode because no record of O(owner) is
    on them.
  returned: when O(owner) is given
  type: list
  elements: str
records_cleared:
  description: With O(owner) and O(state=absent), hosts whose leftover record of O(owner) was cleared without taking
    them out of maintenance mode, because they are out already or a person took them out since the record.
  returned: when O(owner) is given
  type: list
  elements: str
changed_by_person:
  description: With O(owner) and O(state=absent), hosts with a record of O(owner) that a person took out of
    maintenance mode since the record, left as the person left them.
  returned: when O(owner) is given
  type: list
  elements: dict
  contains:
    name:
      description: The host.
      type: str
    by:
      description: The user of the newest exit from maintenance mode since the record.
      type: str
    at:
      description: When, in vCenter's time (UTC).
      type: str
    maintenance_mode:
      description: Whether the host is in maintenance mode now (a person put it back in).
      type: bool
blocking_vms:
  description: On failure, per host that did not enter maintenance mode, the powered-on VMs left on it.
  returned: failed
  type: dict
  sample: {"esxi-02.lab.local": ["gpu-vm-04"]}
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import host_scope, vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._host_reboot import host_maintenance


def argument_spec():
    return vcenter_spec(
        host_scope(),
        state=dict(type="str", choices=["present", "absent", "rebooted"], default="present"),
        timeout=dict(type="int", default=1800),
        reboot_timeout=dict(type="int", default=1200),
        evacuate_powered_off_vms=dict(type="bool", default=False),
        parallel=dict(type="bool", default=False),
        owner=dict(type="str"),
        run_id=dict(type="str"),
    )


def main():
    run_module(argument_spec(), host_maintenance, client=VCenterClient.from_params, supports_check_mode=True,
               required_one_of=[["cluster", "esxi_hostnames"]])


if __name__ == "__main__":
    main()
