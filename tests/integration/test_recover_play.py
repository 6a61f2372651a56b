# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/recover.yml, site.yml's first layer: a VM that an interrupted run left off (its power record in vCenter,
written here as vm_vgpu writes it, from another controller) is powered on with the change the run asked for; a
record of another vCenter stops the play before any change."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import subprocess
import sys

from pyVmomi import vim

from conftest import ROOT
from vsphere_direct import Direct

FIELD = "gpuops.vgpu.vm_vgpu.power"
VM = "gpu-vm-07"


def left_off_by_another_controller(lab, **overrides):
    """VM powered off by a run on another controller that died before powering it on again: its record, as vm_vgpu
    writes it, with the time of vCenter's clock."""
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
        direct.shared_direct("esxi-02.lab.local")
        direct.shared_direct("esxi-03.lab.local")
        direct.add_vgpu(VM, "grid_p40-2q")
        direct.power_on(VM)
        vm = direct.vm(VM)
        content = direct.content
        cluster = vm.runtime.host.parent._moId
        now = direct.si.CurrentTime().astimezone(datetime.timezone.utc).replace(tzinfo=None)
        record = {"v": 1, "run": "20261128T090000Z-4242", "by": "ops@ctl02", "vcenter": content.about.instanceUuid,
                  "cluster": cluster, "power": "poweredOn", "at": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                  "want": {"state": "present", "profiles": ["grid_p40-4q"], "host": None}}
        record.update(overrides)
        manager = content.customFieldsManager
        key = manager.AddCustomFieldDef(name=FIELD, moType=vim.VirtualMachine).key
        manager.SetField(entity=vm, key=key, value=json.dumps(record))
        direct.power_off(VM)
    finally:
        direct.close()


def recover(lab):
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [
        "-e", json.dumps({"vcenter_port": lab.port}), os.path.join(ROOT, "playbooks", "recover.yml")]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0")
    return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=600)


def test_a_vm_left_off_by_a_run_on_another_controller_is_changed_and_powered_on_before_new_work(lab):
    left_off_by_another_controller(lab)
    run = recover(lab)
    assert run.returncode == 0, run.stdout[-3000:]
    vm = lab.vm(VM)
    assert vm["power_state"] == "poweredOn" and [v["profile"] for v in vm["vgpus"]] == ["grid_p40-4q"]
    assert not vm["custom_values"].get(FIELD)
    assert "%s: powered on (powered off by run 20261128T090000Z-4242 of ops@ctl02" % VM in run.stdout
    again = recover(lab)
    assert again.returncode == 0 and "changed=0" in again.stdout and "powered off by run" not in again.stdout


def test_a_record_of_another_vcenter_stops_the_play_before_any_change(lab):
    left_off_by_another_controller(lab, vcenter="00000000-0000-0000-0000-000000000042")
    before = lab.state()
    run = recover(lab)
    assert run.returncode != 0
    assert VM in run.stdout and "00000000-0000-0000-0000-000000000042" in run.stdout and FIELD in run.stdout
    assert lab.state() == before
