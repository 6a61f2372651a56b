# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bios role on the lab's servers, checked against the BMCs' and vCenter's ground truth.

While the role reboots, a watcher samples every host's maintenance mode (vCenter) and power state (BMC), so the
tests see that hosts go down one at a time and only in maintenance mode.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading
import time

import pytest
import yaml

from redfish_direct import LabBmc
from test_bios_settings import PROFILE
from vsphere_direct import Direct

HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local", "esxi-11.lab.local", "esxi-12.lab.local",
         "esxi-sa-01.lab.local"]
# Already has the profile's values when a test starts, so the role must leave it alone.
COMPLIANT = "esxi-12.lab.local"
# esxi-sa-01 is standalone with a powered-on VM: it cannot enter maintenance mode.
STANDALONE = "esxi-sa-01.lab.local"
# The lab inventory's group of every server with a BMC (esxi_hosts and the standalone host).
SERVERS = "servers"


@pytest.fixture
def bmcs(lab):
    """Every lab BMC factory-fresh, COMPLIANT's BIOS already as the profile wants, counters at zero."""
    found = dict((host, LabBmc(lab, host)) for host in HOSTS)
    for bmc in found.values():
        bmc.wait_up()
        bmc.wait_settled()
        bmc.factory_reset()
    apply_directly(found[COMPLIANT], PROFILE[found[COMPLIANT].vendor]["changes"])
    for bmc in found.values():
        bmc.lab("POST", "/stats/reset")
    lab.reset_stats()
    yield found
    for bmc in found.values():
        bmc.wait_up()
        bmc.lab("DELETE", "/faults")
        bmc.wait_settled()
        assert bmc.state()["sessions_open"] == 0, "%s: a session was left open" % bmc.host
    restore_vcenter(lab)


def apply_directly(bmc, attributes):
    """Set BIOS values with plain Redfish calls (PATCH the settings object, restart), as another tool would."""
    _status, systems = bmc.redfish("GET", "/redfish/v1/Systems")
    _status, system = bmc.redfish("GET", systems["Members"][0]["@odata.id"])
    _status, bios = bmc.redfish("GET", system["Bios"]["@odata.id"])
    settings = bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
    _status, shown = bmc.redfish("GET", settings)
    status, answer = bmc.redfish("PATCH", settings, {"Attributes": attributes}, {"If-Match": shown["@odata.etag"]})
    assert status < 300, answer
    reset = system["Actions"]["#ComputerSystem.Reset"]["target"]
    status, answer = bmc.redfish("POST", reset, {"ResetType": "ForceRestart"})
    assert status < 300, answer
    deadline = time.monotonic() + 30
    while bmc.state()["bios"]["pending"] or bmc.state()["power_state"] != "On":
        assert time.monotonic() < deadline, bmc.state()
        time.sleep(0.2)
    assert all(bmc.state()["bios"]["current"][name] == value for name, value in attributes.items())


def restore_vcenter(lab):
    """Every host out of maintenance mode and standalone-vm-01 the only powered-on VM, as the topology starts."""
    session = Direct(lab)
    try:
        for host in lab.state()["hosts"]:
            if host["maintenance_mode"]:
                session.host(host["name"]).ExitMaintenanceMode_Task(timeout=0)
        for vm in lab.state()["vms"]:
            if vm["power_state"] == "poweredOn" and vm["name"] != "standalone-vm-01":
                session.power_off(vm["name"])
    finally:
        session.close()
    deadline = time.monotonic() + 30
    while any(host["maintenance_mode"] for host in lab.state()["hosts"]):
        assert time.monotonic() < deadline
        time.sleep(0.2)


def write_inventory(lab, path, host_vars=None):
    """Host vars giving each lab server the address of its BMC in this lab (ports shift with LAB_PORT_OFFSET)."""
    hosts = dict((host, dict({"bmc_address": lab.bmcs[host]["baseuri"]}, **(host_vars or {}).get(host, {})))
                 for host in HOSTS)
    path.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    return path


@pytest.fixture
def bmc_inventory(lab, tmp_path):
    return write_inventory(lab, tmp_path / "bmcs.yml")


@pytest.fixture
def reboot_inventory(lab, tmp_path):
    """Reboots allowed per host in the inventory, except on the standalone host."""
    allowed = dict((host, {"bios_reboot": host != STANDALONE}) for host in HOSTS)
    return write_inventory(lab, tmp_path / "reboots.yml", host_vars=allowed)


def run_role(lab, run_tasks, inventory, hosts=SERVERS, check=False, expect_failure=False, **variables):
    task = {"name": "bios", "ansible.builtin.include_role": {"name": "gpuops.vgpu.bios"}, "vars": variables}
    return run_tasks([task], hosts=hosts, inventories=[inventory], check=check, expect_failure=expect_failure)


def task_results(run, name):
    return [result for result in run.results if name in result.get("_task", "")]


def fact(run, name):
    found = [result["ansible_facts"][name] for result in run.results if name in result.get("ansible_facts", {})]
    assert found, "no task set %s" % name
    return found[-1]


def report(run):
    return "\n".join(task_results(run, "Report the BIOS of every host")[0]["msg"])


def bmc_writes(bmcs):
    return dict((host, bmc.writes()) for host, bmc in bmcs.items())


class Watch(threading.Thread):
    """Samples, until stopped, which hosts are in maintenance mode (vCenter) and which servers are off (BMCs)."""

    def __init__(self, lab, bmcs):
        super(Watch, self).__init__(daemon=True)
        self.lab = lab
        self.bmcs = bmcs
        self.samples = []
        self.error = None
        self.halt = threading.Event()

    def run(self):
        try:
            while not self.halt.is_set():
                maintenance = set(host["name"] for host in self.lab.state()["hosts"] if host["maintenance_mode"])
                off = set(host for host, bmc in self.bmcs.items() if bmc.state()["power_state"] != "On")
                self.samples.append((maintenance, off))
                time.sleep(0.05)
        except Exception as err:  # pylint: disable=broad-except
            self.error = err

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.halt.set()
        self.join()
        # Samples that stopped early would prove nothing.
        assert self.error is None, "the watcher stopped: %r" % self.error

    def entry_order(self):
        """Hosts in the order they were first seen in maintenance mode."""
        order = []
        for maintenance, _off in self.samples:
            order.extend(sorted(host for host in maintenance if host not in order))
        return order

    def seen_off(self):
        return set().union(*(off for _maintenance, off in self.samples))


def test_without_reboots_values_are_staged_and_waiting_hosts_reported(lab, run_tasks, bmcs, bmc_inventory):
    before = dict((host, bmc.state()) for host, bmc in bmcs.items())
    waiting = [host for host in HOSTS if host != COMPLIANT]

    # The lab inventory allows reboots for esxi_hosts; role variables win over inventory variables.
    checked = run_role(lab, run_tasks, bmc_inventory, check=True, bios_reboot=False)
    assert fact(checked, "bios_pending_reboot") == waiting
    assert all(writes == {} for writes in bmc_writes(bmcs).values())
    assert all(bmc.state()["bios"]["pending"] == {} for bmc in bmcs.values())

    first = run_role(lab, run_tasks, bmc_inventory, bios_reboot=False)
    assert fact(first, "bios_pending_reboot") == waiting
    summary = fact(first, "bios_summary")
    assert summary["ready"] == [COMPLIANT] and summary["waiting"] == waiting and summary["failed"] == []
    text = report(first)
    assert "Ready, values current: %s" % COMPLIANT in text
    assert "Waiting for a reboot:\n  esxi-01.lab.local: MmioAbove4Gb=Enabled, SriovGlobalEnable=Enabled\n" in text
    assert "Set bios_reboot: true to reboot them one at a time in maintenance mode" in text
    assert ("\n  esxi-12.lab.local: mmio_above_4g (not exposed by this BIOS), pcie_aer (not exposed by this BIOS)"
            in text)
    stored = task_results(first, "Store the profile's values as pending BIOS settings")
    assert sorted(result["changed"] for result in stored) == [False] + [True] * len(waiting)

    for host, bmc in bmcs.items():
        truth = bmc.state()
        # Only the values the profile wants changed, and only as pending values: nothing was restarted.
        assert truth["bios"]["current"] == before[host]["bios"]["current"]
        assert truth["resets"] == before[host]["resets"] and truth["power_state"] == "On"
        expected = {} if host == COMPLIANT else PROFILE[bmc.vendor]["changes"]
        assert truth["bios"]["pending"] == expected, host
        assert summary["pending"].get(host, {}) == expected
    assert bmc_writes(bmcs)[COMPLIANT] == {}
    assert not any(host["maintenance_mode"] for host in lab.state()["hosts"])
    assert "EnterMaintenanceMode_Task" not in lab.stats()["by_method"]

    writes = bmc_writes(bmcs)
    again = run_role(lab, run_tasks, bmc_inventory, bios_reboot=False)
    assert not any(result["changed"] for result in again.results)
    assert fact(again, "bios_pending_reboot") == waiting
    assert bmc_writes(bmcs) == writes
    dell = bmcs["esxi-01.lab.local"].state()
    assert [job["JobState"] for job in dell["jobs"]] == ["Scheduled"]


def test_reboots_go_one_host_at_a_time_in_maintenance_mode(lab, run_tasks, bmcs, reboot_inventory):
    rebooting = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local", "esxi-11.lab.local"]
    factory = dict((host, bmcs[host].state()["bios"]["current"]) for host in rebooting)
    compliant_before = bmcs[COMPLIANT].state()

    with Watch(lab, bmcs) as watch:
        run = run_role(lab, run_tasks, reboot_inventory)

    # The standalone host may not be rebooted (bios_reboot: false in its host vars): it only waits.
    assert fact(run, "bios_pending_reboot") == [STANDALONE]
    assert fact(run, "bios_summary")["waiting"] == rebooting + [STANDALONE]
    assert fact(run, "bios_rebooted") == rebooting
    text = report(run)
    assert "Rebooted one at a time in maintenance mode, values now current: %s" % ", ".join(rebooting) in text
    assert "Waiting for a reboot:\n  %s: " % STANDALONE in text
    assert "Set bios_reboot: true to reboot them" in text
    truth = bmcs[STANDALONE].state()
    assert truth["resets"] == 0 and truth["bios"]["pending"] == PROFILE["supermicro"]["changes"]
    for host in rebooting:
        truth = bmcs[host].state()
        assert truth["bios"]["pending"] == {}, host
        assert truth["bios"]["current"] == dict(factory[host], **PROFILE[bmcs[host].vendor]["changes"]), host
        # iDRAC8 has no GracefulRestart: a graceful shutdown and a power-on are two resets, one boot.
        assert truth["boots"] == 1 and truth["power_state"] == "On", host
    truth = bmcs[COMPLIANT].state()
    assert (truth["resets"], truth["bios"]) == (compliant_before["resets"], compliant_before["bios"])
    assert bmcs[COMPLIANT].writes() == {}
    assert not any(host["maintenance_mode"] for host in lab.state()["hosts"])
    by_method = lab.stats()["by_method"]
    assert by_method["EnterMaintenanceMode_Task"] == len(rebooting)
    assert by_method["ExitMaintenanceMode_Task"] == len(rebooting)

    # Never two hosts down at once, never a server off outside maintenance mode, hosts taken in play order.
    assert watch.samples and all(len(maintenance) <= 1 for maintenance, _off in watch.samples)
    assert all(off <= maintenance for maintenance, off in watch.samples)
    assert watch.entry_order() == rebooting
    assert watch.seen_off() == set(rebooting)

    lab.reset_stats()
    again = run_role(lab, run_tasks, reboot_inventory)
    assert not any(result["changed"] for result in again.results)
    assert not task_results(again, "Enter maintenance mode")
    assert "EnterMaintenanceMode_Task" not in lab.stats()["by_method"]
    assert all(bmcs[host].state()["boots"] == 1 for host in rebooting)


def test_check_mode_with_reboots_changes_nothing(lab, run_tasks, bmcs, reboot_inventory):
    before = lab.state()
    bmcs_before = dict((host, bmc.state()) for host, bmc in bmcs.items())
    run = run_role(lab, run_tasks, reboot_inventory, check=True)
    assert lab.state() == before
    assert "EnterMaintenanceMode_Task" not in lab.stats()["by_method"]
    assert all(writes == {} for writes in bmc_writes(bmcs).values())
    assert dict((host, bmc.state()) for host, bmc in bmcs.items()) == bmcs_before
    restarts = task_results(run, "Restart the server and wait until the BIOS values are current")
    assert [result["rebooted"] for result in restarts] == [False] * 4
    assert [result["changed"] for result in restarts] == [True] * 4


def test_host_that_cannot_enter_maintenance_mode_stops_the_role(lab, run_tasks, bmcs, bmc_inventory):
    session = Direct(lab)
    try:
        # mixed-cluster's DRS is partially automated: vCenter does not move this VM, so esxi-11 cannot be emptied.
        session.power_on("mixed-vm-01")
    finally:
        session.close()
    hosts = "esxi-01.lab.local:esxi-11.lab.local:esxi-12.lab.local:esxi-sa-01.lab.local"
    # esxi-12 is made to wait for a reboot too, so the test sees that it is not rebooted after esxi-11 failed.
    bmcs[COMPLIANT].factory_reset()

    run = run_role(lab, run_tasks, bmc_inventory, hosts=hosts, expect_failure=True, bios_reboot=True)
    message = run.failed[-1]["msg"]
    assert message.startswith("BIOS reboots stopped at 'Enter maintenance mode: esxi-11.lab.local': VMs keep "
                              "host(s) from entering maintenance mode"), message
    assert "mixed-vm-01" in message
    assert "esxi-11.lab.local is not in maintenance mode and keeps running." in message
    assert "Rebooted before it: esxi-01.lab.local." in message
    assert ("Not rebooted, BIOS values pending until their next reboot: esxi-12.lab.local, esxi-sa-01.lab.local."
            in message)

    assert bmcs["esxi-01.lab.local"].state()["boots"] == 1
    for host in ("esxi-11.lab.local", "esxi-12.lab.local", "esxi-sa-01.lab.local"):
        truth = bmcs[host].state()
        assert truth["resets"] == 0 and truth["bios"]["pending"] == PROFILE[bmcs[host].vendor]["changes"], host
    assert not any(host["maintenance_mode"] for host in lab.state()["hosts"])
    assert lab.vm("mixed-vm-01")["host"] == "esxi-11.lab.local"


def test_standalone_host_with_a_running_vm_fails_clearly(lab, run_tasks, bmcs, bmc_inventory):
    run = run_role(lab, run_tasks, bmc_inventory, hosts="esxi-sa-01.lab.local", expect_failure=True,
                   bios_reboot=True)
    message = run.failed[-1]["msg"]
    assert message.startswith("BIOS reboots stopped at 'Enter maintenance mode: esxi-sa-01.lab.local':"), message
    assert "esxi-sa-01.lab.local: standalone-vm-01" in message
    assert "is not in maintenance mode and keeps running" in message
    truth = bmcs["esxi-sa-01.lab.local"].state()
    assert truth["resets"] == 0 and truth["bios"]["pending"] == PROFILE["supermicro"]["changes"]
    assert lab.vm("standalone-vm-01")["power_state"] == "poweredOn"
    assert not lab.host("esxi-sa-01.lab.local")["maintenance_mode"]


def test_failed_reboot_leaves_the_host_in_maintenance_mode_and_stops(lab, run_tasks, bmcs, bmc_inventory, tmp_path):
    bmcs["esxi-02.lab.local"].fault(kind="apply_fails", count=1)
    run = run_role(lab, run_tasks, bmc_inventory, hosts="esxi-0*", expect_failure=True, bios_reboot=True)
    message = run.failed[-1]["msg"]
    assert message.startswith("BIOS reboots stopped at 'Restart the server and wait until the BIOS values are "
                              "current: esxi-02.lab.local': BIOS job"), message
    assert "ended Failed: The BIOS rejected the pending configuration during POST." in message
    assert ("esxi-02.lab.local stays in maintenance mode; fix the cause and run the role again: it takes the host "
            "out of maintenance mode once its reboot is done") in message
    assert "Rebooted before it: esxi-01.lab.local." in message
    assert "Not rebooted, BIOS values pending until their next reboot: esxi-03.lab.local." in message

    in_maintenance = dict((host["name"], host["maintenance_mode"]) for host in lab.state()["hosts"])
    assert [host for host, on in in_maintenance.items() if on] == ["esxi-02.lab.local"]
    assert bmcs["esxi-01.lab.local"].state()["bios"]["pending"] == {}
    failed = bmcs["esxi-02.lab.local"].state()
    assert failed["boots"] == 1 and failed["bios"]["pending"] == {}
    assert failed["bios"]["current"]["SriovGlobalEnable"] == "Disabled"
    untouched = bmcs["esxi-03.lab.local"].state()
    assert untouched["resets"] == 0 and untouched["bios"]["pending"] == PROFILE["dell_idrac8"]["changes"]
    assert maintenance_records(lab) == {"esxi-02.lab.local": "bios"}, \
        "vCenter holds the record of the host the role left in maintenance mode"

    run_role(lab, run_tasks, bmc_inventory, hosts="esxi-0*", bios_reboot=True)
    assert not any(host["maintenance_mode"] for host in lab.state()["hosts"])
    assert maintenance_records(lab) == {}


def maintenance_records(lab):
    """Host name to the owner its maintenance record (custom attribute gpuops.vgpu.maintenance) names."""
    found = {}
    for host in lab.state()["hosts"]:
        raw = (host.get("custom_values") or {}).get("gpuops.vgpu.maintenance")
        if raw:
            found[host["name"]] = json.loads(raw)["owner"]
    return found


def test_strict_fails_only_the_host_that_cannot_meet_the_profile(lab, run_tasks, bmcs, bmc_inventory):
    # Supermicro's BIOS exposes every intent of the profile; HPE's has no MMIO or AER attribute.
    bmcs[COMPLIANT].factory_reset()
    run = run_role(lab, run_tasks, bmc_inventory, hosts="esxi-12.lab.local:esxi-sa-01.lab.local",
                   expect_failure=True, bios_strict=True, bios_reboot=False)
    failed = run.failed
    assert len(failed) == 1 and "Profile gpu_virtualization cannot be met" in failed[0]["msg"]
    assert "mmio_above_4g: not exposed by this BIOS" in failed[0]["msg"]
    assert bmcs[COMPLIANT].writes() == {}
    assert bmcs["esxi-sa-01.lab.local"].state()["bios"]["pending"] == PROFILE["supermicro"]["changes"]
    summary = fact(run, "bios_summary")
    assert summary["waiting"] == ["esxi-sa-01.lab.local"] and summary["failed"] == [COMPLIANT]
    assert summary["unmet"] == {}
    assert "Not handled, failed earlier in the play: %s" % COMPLIANT in report(run)


def test_host_in_maintenance_mode_before_the_role_stays_in_it(lab, run_tasks, bmcs, bmc_inventory):
    session = Direct(lab)
    try:
        session.host("esxi-03.lab.local").EnterMaintenanceMode_Task(timeout=0)
    finally:
        session.close()
    deadline = time.monotonic() + 30
    while not lab.host("esxi-03.lab.local")["maintenance_mode"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    lab.reset_stats()

    run = run_role(lab, run_tasks, bmc_inventory, hosts="esxi-03.lab.local", bios_reboot=True)
    assert fact(run, "bios_rebooted") == ["esxi-03.lab.local"]
    truth = bmcs["esxi-03.lab.local"].state()
    assert truth["boots"] == 1 and truth["bios"]["pending"] == {}
    assert lab.host("esxi-03.lab.local")["maintenance_mode"] is True and maintenance_records(lab) == {}
    assert "ExitMaintenanceMode_Task" not in lab.stats()["by_method"]


def test_host_without_a_bmc_address_is_refused_before_any_change(lab, run_tasks, bmcs, tmp_path):
    inventory = tmp_path / "no-bmc.yml"
    inventory.write_text(yaml.safe_dump({"esxi_hosts": {"hosts": {"esxi-99.lab.local": {}}}}))
    run = run_role(lab, run_tasks, inventory, hosts="esxi-99.lab.local", expect_failure=True)
    assert "missing required arguments: bmc_address" in run.failed[0]["msg"]
    assert lab.bmc_credentials[1] not in run.stdout + run.stderr
    assert all(writes == {} for writes in bmc_writes(bmcs).values())
