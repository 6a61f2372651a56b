# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_graphics logic with real pyVmomi data objects and a client that records what would be sent."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _host_graphics as hg
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError

vim = pytest.importorskip("pyVmomi").vim

GPU_A, GPU_B, VGA = "0000:3b:00.0", "0000:5e:00.0", "0000:03:00.0"
L40S = "NVIDIA L40S"


class FakeManager:
    """Graphics manager and service system of one host: stores the config, applies it when Xorg restarts."""

    def __init__(self, log, item, fail=None):
        self.log, self.item, self.fail = log, item, fail

    def UpdateGraphicsConfig(self, config):
        if self.fail == "update":
            raise ApiError("vCenter answered InvalidArgument: bad config", fault="InvalidArgument")
        self.log.append(("UpdateGraphicsConfig", self.item["name"], config))
        self.item["config.graphicsConfig"] = config

    def RestartService(self, id):  # noqa: A002 - the vSphere parameter name
        if self.fail == "restart":
            raise ApiError("vCenter answered HostConfigFault: xorg did not start", fault="HostConfigFault")
        self.log.append(("RestartService", self.item["name"], id))
        state = hg.describe_config(self.item["config.graphicsConfig"])
        infos = []
        for info in self.item["config.graphicsInfo"]:
            new = _info(info.pciId, hg.configured_type(state, info.pciId), info.vm, info.deviceName, info.vendorName)
            if info.vgpuMode:  # a vCenter of API 8.0.3; this one runs every GPU equal-size
                new.vgpuMode = "sameSize" if new.graphicsType == "sharedDirect" else "none"
            infos.append(new)
        self.item["config.graphicsInfo"] = infos


class FakeClient:
    def __init__(self, items, vm_names=None):
        self.items = items
        self.vm_names = vm_names or {}
        self.log = []
        self.reads = []

    def hosts(self, properties, cluster=None, esxi_hostnames=None, datacenter=None):
        self.reads.append(("hosts", cluster, tuple(esxi_hostnames or ())))
        return [dict(item) for item in self.items]

    def retrieve_objects(self, objects, properties):
        self.reads.append(("retrieve_objects", tuple(properties)))
        if properties == ["name"]:
            return [{"obj": vm, "moid": vm._moId, "name": self.vm_names[vm._moId]} for vm in objects]
        by_moid = dict((item["moid"], item) for item in self.items)
        return [dict(by_moid[obj._moId]) for obj in objects]

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)


def _info(pci_id, active, vms=(), name="Tesla P40", vendor="NVIDIA Corporation"):
    return vim.host.GraphicsInfo(deviceName=name, vendorName=vendor, pciId=pci_id, graphicsType=active,
                                 memorySizeInKB=24 * 1024 * 1024, vm=list(vms))


def _config(default="shared", policy="performance", entries=()):
    return vim.host.GraphicsConfig(
        hostDefaultGraphicsType=default, sharedPassthruAssignmentPolicy=policy,
        deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId=pci, graphicsType=kind, vgpuMode=mode)
                    for pci, kind, mode in entries])


def _host(client_log, name, infos, config, fail=None, moid=None, l40s=None):
    """A host whose GPUs are P40s (PCI device id 0x1b38), except the one at ``l40s``."""
    pci = [vim.host.PciDevice(id=GPU_A, vendorId=0x10DE, deviceId=0x26B9 if l40s == GPU_A else 0x1B38),
           vim.host.PciDevice(id=GPU_B, vendorId=0x10DE, deviceId=0x26B9 if l40s == GPU_B else 0x1B38),
           vim.host.PciDevice(id=VGA, vendorId=0x102B, deviceId=0x0536)]
    item = {"obj": vim.HostSystem(moid or name), "moid": moid or name, "name": name,
            "runtime.connectionState": "connected", "config.graphicsConfig": config, "config.graphicsInfo": infos,
            "hardware.pciDevice": pci}
    item["configManager.graphicsManager"] = item["configManager.serviceSystem"] = FakeManager(client_log, item, fail)
    return item


def _params(**options):
    params = dict(cluster="gpu-cluster", esxi_hostnames=None, datacenter=None, default_graphics_type=None,
                  assignment_policy=None, gpu_graphics_type=None, devices=None, restart_xorg="when_changed",
                  force=False)
    params.update(options)
    return params


class Outcome:
    def __init__(self, changed, hosts, diff, warnings):
        self.changed, self.hosts, self.diff, self.warnings = changed, hosts, diff, warnings


def _configure(client, check_mode=False, **options):
    result = hg.configure(client, _params(**options), check_mode)
    return Outcome(result["changed"], result["hosts"], result["diff"], result["warnings"])


def _steps(client):
    """(method, host) of every call sent, in order."""
    return [entry[:2] for entry in client.log]


def test_only_the_policy_changes_when_only_the_policy_is_asked():
    current = hg.describe_config(_config("shared", "performance", [(GPU_A, "sharedDirect", "mixedSize")]))
    wanted = hg.wanted_config(current, [GPU_A, GPU_B], {"assignment_policy": "consolidation"})
    assert wanted == {"default_graphics_type": "shared", "assignment_policy": "consolidation",
                      "devices": [{"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"}]}


def test_gpu_graphics_type_sets_an_entry_per_gpu_and_keeps_vgpu_mode():
    current = hg.describe_config(_config("shared", "consolidation", [(GPU_A, "shared", "mixedSize")]))
    wanted = hg.wanted_config(current, [GPU_A, GPU_B], {"gpu_graphics_type": "sharedDirect"})
    assert wanted["default_graphics_type"] == "shared"
    assert wanted["assignment_policy"] == "consolidation"
    assert wanted["devices"] == [
        {"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"},
        {"pci_id": GPU_B, "graphics_type": "sharedDirect", "vgpu_mode": None},
    ]


def test_gpus_the_host_default_already_gives_what_is_asked_get_no_entry():
    current = hg.describe_config(_config("sharedDirect", "performance"))
    assert hg.wanted_config(current, [GPU_A, GPU_B], {"gpu_graphics_type": "sharedDirect"}) == current
    assert hg.wanted_config(current, [GPU_A], {"devices": [{"pci_id": GPU_A, "vgpu_mode": "sameSize"}]}) == current
    mixed = hg.wanted_config(current, [GPU_A], {"devices": [{"pci_id": GPU_A, "vgpu_mode": "mixedSize"}]})
    assert mixed["devices"] == [{"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"}]


def test_a_vgpu_mode_entry_keeps_the_gpus_effective_type_and_devices_win():
    current = hg.describe_config(_config("sharedDirect"))
    wanted = hg.wanted_config(current, [GPU_A, GPU_B], {
        "gpu_graphics_type": "shared",
        "devices": [{"pci_id": GPU_A, "graphics_type": "sharedDirect"}]})
    assert hg.configured_type(wanted, GPU_A) == "sharedDirect"
    assert hg.configured_type(wanted, GPU_B) == "shared"
    mode_only = hg.wanted_config(current, [GPU_A], {"devices": [{"pci_id": GPU_B, "vgpu_mode": "mixedSize"}]})
    assert mode_only["devices"] == [{"pci_id": GPU_B, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"}]


def test_the_spec_carries_the_whole_configuration():
    state = {"default_graphics_type": "shared", "assignment_policy": "consolidation",
             "devices": [{"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": "sameSize"},
                         {"pci_id": GPU_B, "graphics_type": "shared", "vgpu_mode": None}]}
    spec = hg.config_spec(state)
    assert isinstance(spec, vim.host.GraphicsConfig)
    assert (spec.hostDefaultGraphicsType, spec.sharedPassthruAssignmentPolicy) == ("shared", "consolidation")
    assert [(d.deviceId, d.graphicsType, d.vgpuMode) for d in spec.deviceType] == [
        (GPU_A, "sharedDirect", "sameSize"), (GPU_B, "shared", None)]
    assert hg.describe_config(spec) == state


def test_non_nvidia_graphics_devices_are_left_alone():
    log = []
    item = _host(log, "esxi-01", [_info(GPU_A, "basic"), _info(VGA, "basic", name="G200eR", vendor="Matrox")],
                 _config("shared"))
    assert [info.pciId for info in hg.nvidia_gpus(item)] == [GPU_A]
    change = hg.HostChange(item, {"gpu_graphics_type": "sharedDirect"}, "when_changed")
    assert [entry["pci_id"] for entry in change.wanted["devices"]] == [GPU_A]


def test_nothing_to_change_costs_one_read_and_sends_nothing():
    client = FakeClient([])
    client.items = [_host(client.log, name, [_info(GPU_A, "sharedDirect")], _config("sharedDirect"))
                    for name in ("esxi-01", "esxi-02", "esxi-03")]
    outcome = _configure(client, default_graphics_type="sharedDirect", gpu_graphics_type=None,
                         assignment_policy="performance")
    assert outcome.changed is False
    assert client.log == []
    assert client.reads == [("hosts", "gpu-cluster", ())]
    assert [host["changed"] for host in outcome.hosts] == [False, False, False]
    assert outcome.diff == {"before": {}, "after": {}}
    assert outcome.warnings == []


def test_a_change_sends_the_full_spec_restarts_xorg_and_reads_back():
    client = FakeClient([])
    item = _host(client.log, "esxi-01", [_info(GPU_A, "basic"), _info(GPU_B, "basic")],
                 _config("shared", "consolidation", [(GPU_B, "shared", "mixedSize")]))
    client.items = [item]
    outcome = _configure(client, gpu_graphics_type="sharedDirect")
    hosts, diff = outcome.hosts, outcome.diff
    assert outcome.changed is True
    assert _steps(client) == [("UpdateGraphicsConfig", "esxi-01"), ("RestartService", "esxi-01")]
    sent = client.log[0][2]
    assert sent.sharedPassthruAssignmentPolicy == "consolidation", "a field not asked for is sent as it was"
    assert sent.hostDefaultGraphicsType == "shared"
    assert [(d.deviceId, d.graphicsType, d.vgpuMode) for d in sent.deviceType] == [
        (GPU_B, "sharedDirect", "mixedSize"), (GPU_A, "sharedDirect", None)]
    assert client.log[1][2] == "xorg"
    assert client.reads[-1] == ("retrieve_objects", tuple(hg.AFTER_PROPERTIES))
    assert hosts[0]["xorg_restarted"] is True
    assert hosts[0]["xorg_restart_reason"] == "the graphics configuration changed"
    assert diff["before"]["esxi-01"]["assignment_policy"] == "consolidation"


def test_check_mode_predicts_without_sending():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config("shared"))]
    outcome = _configure(client, check_mode=True, default_graphics_type="sharedDirect")
    hosts, diff = outcome.hosts, outcome.diff
    assert outcome.changed is True
    assert client.log == []
    assert hosts[0]["xorg_restarted"] is True
    assert hosts[0]["after"]["default_graphics_type"] == "sharedDirect"
    assert hosts[0]["after"]["gpus"] == [{"pci_id": GPU_A, "device_name": "Tesla P40",
                                          "configured_graphics_type": "sharedDirect", "graphics_type": "sharedDirect",
                                          "vgpu_mode": None}]
    assert diff["before"]["esxi-01"]["gpus"][0]["graphics_type"] == "basic"


def test_a_pending_type_restarts_xorg_and_says_why():
    log = []
    item = _host(log, "esxi-01", [_info(GPU_A, "shared")], _config("sharedDirect"))
    change = hg.HostChange(item, {}, "when_changed")
    assert change.config_changed is False
    assert change.restart is True
    assert "never followed by an Xorg restart" in change.reason and GPU_A in change.reason
    never = hg.HostChange(item, {}, "never")
    assert never.changed is False and never.pending == [GPU_A]
    always = hg.HostChange(_host(log, "esxi-02", [_info(GPU_A, "sharedDirect")], _config("sharedDirect")), {}, "always")
    assert always.changed is True and always.reason == "restart_xorg is always"


def test_never_warns_about_gpus_waiting_for_a_restart():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config("shared"))]
    outcome = _configure(client, default_graphics_type="sharedDirect", restart_xorg="never")
    assert outcome.changed is True
    assert _steps(client) == [("UpdateGraphicsConfig", "esxi-01")]
    assert outcome.hosts[0]["xorg_restarted"] is False
    assert len(outcome.warnings) == 1 and GPU_A in outcome.warnings[0] and "esxi-01" in outcome.warnings[0]


def test_an_unknown_pci_id_fails_before_any_change_naming_host_and_gpus():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config()),
                    _host(client.log, "esxi-02", [_info(GPU_B, "basic")], _config())]
    with pytest.raises(InputError) as err:
        _configure(client, assignment_policy="consolidation",
                   devices=[{"pci_id": "3b:00.0", "graphics_type": "sharedDirect", "vgpu_mode": None}])
    assert "esxi-02" in str(err.value) and "3b:00.0" in str(err.value) and "%s (Tesla P40)" % GPU_B in str(err.value)
    assert client.log == []


def test_duplicate_devices_fail():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config())]
    with pytest.raises(InputError, match="more than once"):
        _configure(client, devices=[{"pci_id": GPU_A, "graphics_type": "shared"},
                                    {"pci_id": "3b:00.0", "vgpu_mode": "sameSize"}])


def test_running_vgpu_vms_block_a_type_change_unless_forced():
    vm1, vm2 = vim.VirtualMachine("vm-1"), vim.VirtualMachine("vm-2")
    client = FakeClient([], vm_names={"vm-1": "gpu-vm-01", "vm-2": "gpu-vm-02"})
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "sharedDirect", [vm2, vm1])], _config("sharedDirect"))]
    with pytest.raises(InputError) as err:
        _configure(client, gpu_graphics_type="shared")
    assert "esxi-01 GPU %s (Tesla P40): gpu-vm-01, gpu-vm-02" % GPU_A in str(err.value)
    assert "force" in str(err.value)
    assert client.log == []

    forced = _configure(client, gpu_graphics_type="shared", force=True)
    assert forced.changed is True
    assert _steps(client) == [("UpdateGraphicsConfig", "esxi-01"), ("RestartService", "esxi-01")]
    assert "gpu-vm-01" in forced.warnings[0]


def test_a_vgpu_mode_change_under_running_vgpus_is_refused_even_with_force():
    vm1 = vim.VirtualMachine("vm-1")
    client = FakeClient([], vm_names={"vm-1": "ai-vm-01"})
    client.items = [_host(client.log, "esxi-21", [_info(GPU_A, "sharedDirect", [vm1], name=L40S)],
                          _config("sharedDirect"), l40s=GPU_A)]
    for force in (False, True):
        with pytest.raises(InputError) as err:
            _configure(client, force=force, devices=[{"pci_id": GPU_A, "vgpu_mode": "mixedSize"}])
        assert "vGPU mode" in str(err.value) and "esxi-21 GPU %s (%s): ai-vm-01" % (GPU_A, L40S) in str(err.value)
    assert client.log == []


def test_mixed_size_is_refused_before_any_change_on_a_model_that_cannot_run_it():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "sharedDirect")], _config("sharedDirect"))]
    with pytest.raises(InputError) as err:
        _configure(client, devices=[{"pci_id": GPU_A, "vgpu_mode": "mixedSize"}])
    assert "esxi-01 GPU %s (Tesla P40) cannot run vgpu_mode mixedSize" % GPU_A in str(err.value)
    assert "L40S" in err.value.hint and client.log == []


def test_a_vgpu_mode_that_does_not_take_is_reported():
    info = _info(GPU_A, "sharedDirect", name=L40S)
    info.vgpuMode = "sameSize"
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-21", [info], _config("sharedDirect"), l40s=GPU_A)]
    predicted = _configure(client, check_mode=True, devices=[{"pci_id": GPU_A, "vgpu_mode": "mixedSize"}])
    assert predicted.hosts[0]["after"]["gpus"][0]["vgpu_mode"] == "mixedSize"
    real = _configure(client, devices=[{"pci_id": GPU_A, "vgpu_mode": "mixedSize"}])
    assert real.hosts[0]["after"]["gpus"][0]["vgpu_mode"] == "sameSize"
    assert any("did not take" in w and "%s runs sameSize, not mixedSize" % GPU_A in w for w in real.warnings)


def test_running_vgpu_vms_do_not_block_other_changes():
    vm1 = vim.VirtualMachine("vm-1")
    client = FakeClient([], vm_names={"vm-1": "gpu-vm-01"})
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "sharedDirect", [vm1])], _config("sharedDirect"))]
    assert _configure(client, assignment_policy="consolidation").changed is True
    assert _steps(client) == [("UpdateGraphicsConfig", "esxi-01"), ("RestartService", "esxi-01")]


def test_a_failure_half_way_says_which_hosts_are_done():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config()),
                    _host(client.log, "esxi-02", [_info(GPU_A, "basic")], _config(), fail="restart"),
                    _host(client.log, "esxi-03", [_info(GPU_A, "basic")], _config())]
    with pytest.raises(ApiError) as err:
        _configure(client, default_graphics_type="sharedDirect")
    message = str(err.value)
    assert "Host esxi-02" in message and "xorg did not start" in message
    assert "configuration updated before that" in message
    assert "Hosts done: esxi-01; hosts not touched: esxi-03" in message
    assert _steps(client) == [
        ("UpdateGraphicsConfig", "esxi-01"), ("RestartService", "esxi-01"), ("UpdateGraphicsConfig", "esxi-02")]
    assert err.value.details["fault"] == "HostConfigFault"


def test_disconnected_hosts_fail_before_any_change():
    client = FakeClient([])
    item = _host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config())
    item["runtime.connectionState"] = "notResponding"
    client.items = [item]
    with pytest.raises(InputError, match="esxi-01 \\(notResponding\\)"):
        _configure(client, default_graphics_type="sharedDirect")


def test_check_mode_predicts_the_real_run_and_a_second_run_changes_nothing():
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic"), _info(GPU_B, "basic", name=L40S)],
                          _config("shared", "performance", [(GPU_B, "shared", None)]), l40s=GPU_B)]
    options = dict(default_graphics_type="sharedDirect", assignment_policy="consolidation",
                   devices=[{"pci_id": GPU_B, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"}])
    predicted = _configure(client, check_mode=True, **options)
    assert client.log == []
    real = _configure(client, **options)
    assert (predicted.changed, predicted.hosts, predicted.diff) == (real.changed, real.hosts, real.diff)
    assert real.hosts[0]["after"]["gpus"][1] == {"pci_id": GPU_B, "device_name": L40S,
                                                 "configured_graphics_type": "sharedDirect",
                                                 "graphics_type": "sharedDirect", "vgpu_mode": None}
    sent = len(client.log)
    again = _configure(client, **options)
    assert again.changed is False and len(client.log) == sent
    assert again.hosts[0]["before"] == again.hosts[0]["after"] == real.hosts[0]["after"]


def test_a_field_vcenter_does_not_keep_is_reported():
    wanted = {"default_graphics_type": "sharedDirect", "assignment_policy": "performance",
              "devices": [{"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"}]}
    after = dict(wanted, devices=[{"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": None}])
    assert hg.not_kept(wanted, after) == ["vgpu_mode of %s mixedSize (it has None)" % GPU_A]
    assert hg.not_kept(wanted, wanted) == []
