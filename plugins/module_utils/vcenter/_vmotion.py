# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one way to move a VM to another host: ``RelocateVM_Task`` with the host (and pool) in its spec.

For a powered-on VM this is a live migration, vMotion (vSphere Web Services API, VirtualMachine.RelocateVM_Task);
vCenter checks a vGPU VM against ``vgpu.hotmigrate.enabled`` and the target's GPUs itself. ``vm_vgpu``'s ``host``
and ``vgpu_vmotion`` both move VMs through here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None


def relocate_starter(client, vm, host, pool=None, started=None):
    """A callable that starts the move of ``vm`` to ``host`` (and ``pool``) and returns its task; with ``started``
    (a dict) the task is also kept there under the VM's moid, for reading its times afterwards."""
    spec = vim.vm.RelocateSpec(host=host, pool=pool)

    def start():
        task = client.call(vm.RelocateVM_Task, spec=spec)
        if started is not None:
            started[vm._moId] = task
        return task
    return start


def task_seconds(client, tasks):
    """Per task moid, the seconds vCenter's ``info.startTime`` to ``info.completeTime`` span (None if not both),
    read in one call."""
    seconds = {}
    for item in client.retrieve_objects(list(tasks), ["info.startTime", "info.completeTime"]):
        start, end = item.get("info.startTime"), item.get("info.completeTime")
        seconds[item["moid"]] = round((end - start).total_seconds(), 3) if start and end else None
    return seconds
