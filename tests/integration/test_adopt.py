# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A running datacenter adopted as it is (docs/adopt.md): gpu-cluster given its host driver (vLCM's REST API), Shared
Direct and vGPU VMs by hand (pyVmomi), then taken over through the vcenter_gpu inventory plugin. The plugin lists
those VMs with their profiles; ``site.yml --check --diff`` changes nothing; the doctor fails what was left wrong (one
host's GPU not in Shared Direct, and the lab BMCs' factory BIOS) and passes the rest; a real run changes what the
doctor failed and nothing else: every VM that had its profile keeps its host and GPU.

The lab runs no guest OS behind these VMs here: the guest layer is left out (``--skip-tags guests``) and the doctor
does not read the guests; test_adopt_guests walks the guests, licensed by hand, on the same carve."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml
from pyVmomi import vim

from conftest import INVENTORY, ROOT
from site_run import SITE, bmc_truth
from test_vcenter_gpu_inventory import unwrapped
from vlcm_lab import DAEMON, DAEMON_VERSION, DRIVER, DRIVER_VERSION, Rest, set_image
from vsphere_direct import Direct

CLUSTER = "gpu-cluster"
HOSTS = ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local")
# Left as a fresh ESXi host is: its GPU in the default graphics type, not Shared Direct.
WRONG_HOST = "esxi-03.lab.local"
# The VMs carved by hand: running ones on their GPUs, and powered-off ones that have their profile.
RUNNING = {"gpu-vm-01": "grid_p40-8q", "gpu-vm-04": "grid_p40-3q"}
# gpu-vm-07 is registered on the host left wrong; a fresh plan would put it beside gpu-vm-04.
STOPPED = {"gpu-vm-02": "grid_p40-8q", "gpu-vm-07": "grid_p40-3q"}
PROFILES = dict(RUNNING, **STOPPED)


def install_driver_by_hand(lab, bundles):
    """The vGPU host driver in gpu-cluster's vLCM image and on its hosts, through vLCM's REST API."""
    rest = Rest(lab)
    for location in bundles:
        info = rest.task("POST", "/api/esx/settings/depots/offline?vmw-task=true",
                         {"source_type": "PULL", "location": location.replace("{{ vcenter_port }}", str(lab.port))})
        assert info["status"] == "SUCCEEDED", info
    set_image(rest, {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION})
    info = rest.task("POST", "/api/esx/settings/clusters/%s/software?action=apply&vmw-task=true"
                     % rest.cluster_id(CLUSTER), {"accept_eula": True}, timeout=120)
    assert info["status"] == "SUCCEEDED", info


def carve_by_hand(lab):
    """What an administrator did years ago in the vSphere Client, here through vSphere's APIs."""
    install_driver_by_hand(lab, job_vars()["host_driver_bundles"])
    direct = Direct(lab)
    try:
        for host in HOSTS:
            if host != WRONG_HOST:
                direct.shared_direct(host)
        direct.content.setting.UpdateOptions(changedValue=[
            vim.option.OptionValue(key="vgpu.hotmigrate.enabled", value=True)])
        for vm, profile in PROFILES.items():
            direct.add_vgpu(vm, profile)
        for vm in RUNNING:
            direct.power_on(vm)
    finally:
        direct.close()


def job_vars():
    with open(os.path.join(ROOT, "inventories", "lab", "job.yml")) as handle:
        return yaml.safe_load(handle)["all"]["children"]["vcenter"]["vars"]


def user_inventory(lab, path):
    """An inventory directory as docs/adopt.md writes it: the plugin's file, and the user's own variables for what
    vCenter does not know (vCenter's password, BMC addresses, the hosts' SSH)."""
    (path / "group_vars").mkdir(parents=True)
    (path / "host_vars").mkdir()
    (path / "gpu.vcenter_gpu.yml").write_text(yaml.safe_dump({
        "plugin": "gpuops.vgpu.vcenter_gpu", "hostname": "127.0.0.1", "port": lab.port,
        "username": lab.vcenter_vars["vcenter_username"], "password": lab.vcenter_vars["vcenter_password"],
        "validate_certs": False, "clusters": [CLUSTER]}))
    with open(INVENTORY) as handle:
        servers = yaml.safe_load(handle)["all"]["children"]["servers"]["vars"]
    servers.update(ansible_ssh_private_key_file=lab.shells["private_key"], ansible_ssh_common_args=(
        "-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes" % lab.shells["known_hosts"]))
    (path / "group_vars" / "servers.yml").write_text(yaml.safe_dump(servers))
    job = job_vars()
    (path / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "vcenter_password": lab.vcenter_vars["vcenter_password"], "vcenter_validate_certs": False,
        "vgpu_clusters": [CLUSTER], "bmc_username": lab.bmc_credentials[0], "bmc_password": lab.bmc_credentials[1],
        "bmc_validate_certs": False, "host_driver_bundles": job["host_driver_bundles"],
        "host_driver_accept_eula": True}))
    for host in HOSTS:
        (path / "host_vars" / ("%s.yml" % host)).write_text(yaml.safe_dump({
            "bmc_address": lab.bmcs[host]["baseuri"], "ansible_port": lab.shells["hosts"][host]["port"]}))
    return path


def env():
    return dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
                ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
                ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="1")


def listed(inventory):
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i", str(inventory),
                           "--list"], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout, object_hook=unwrapped)


def site(lab, inventory, state_dir, *options):
    variables = {"doctor_output_dir": str(state_dir), "fleet_report_output_dir": str(state_dir),
                 "cluster_vgpu_state_file": "%s/{{ vcenter_hostname }}_{{ cluster_vgpu_cluster }}.json" % state_dir,
                 "doctor_cluster_vgpu_state_dir": str(state_dir), "doctor_fail_on": "never",
                 "doctor_gather_guests": False}
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
            "-e", json.dumps(variables), "--skip-tags", "guests", SITE] + list(options)
    proc = subprocess.run(argv, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)
    assert lab.vcenter_vars["vcenter_password"] not in proc.stdout
    return proc


def placements(state):
    """Each vGPU VM's host, power state and vGPU devices (profile and the GPU it runs on), from /lab/state."""
    return dict((vm["name"], {"host": vm["host"], "power_state": vm["power_state"], "vgpus": vm["vgpus"]})
                for vm in state["vms"] if vm["vgpus"])


def changes(before, after, path=""):
    """The paths where two /lab/state documents differ; lists of named objects are compared by name."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            found.extend(changes(before.get(key), after.get(key), "%s/%s" % (path, key)))
        return found
    if isinstance(before, list) and isinstance(after, list) and all(
            isinstance(item, dict) and "name" in item for item in before + after):
        return changes(dict((item["name"], item) for item in before), dict((item["name"], item) for item in after),
                       path)
    return [] if before == after else [path]


def findings(state_dir):
    with open(str(state_dir / "doctor.json")) as handle:
        return dict(((f["check"], f["object"]), f["status"]) for f in json.load(handle)["findings"])


def test_a_datacenter_carved_by_hand_is_adopted_through_the_plugin(lab, tmp_path):
    carve_by_hand(lab)
    inventory = user_inventory(lab, tmp_path / "inventory")

    found = listed(inventory)
    hostvars = found["_meta"]["hostvars"]
    assert sorted(found["gpu_guests"]["hosts"]) == sorted(PROFILES)
    assert dict((vm, hostvars[vm]["vgpu_profile"]) for vm in PROFILES) == PROFILES
    assert sorted(found["esxi_hosts"]["hosts"]) == list(HOSTS)
    # The connection is every host's, where group_vars/all.yml of a hand-written inventory has it: the plays on the
    # ESXi hosts (the BIOS layer) read it as the vcenter host's plays do; the password comes from the user's vars.
    for host in HOSTS + ("localhost",):
        assert (hostvars[host]["vcenter_hostname"], hostvars[host]["vcenter_port"]) == ("127.0.0.1", lab.port), host
        assert hostvars[host]["vcenter_password"] == lab.vcenter_vars["vcenter_password"], host

    before, bmcs_before = lab.state(), bmc_truth(lab)
    checked = site(lab, inventory, tmp_path, "--check", "--diff")
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert changes(before, lab.state()) == [] and bmc_truth(lab) == bmcs_before

    # The doctor's verdicts follow the ground truth: the host left wrong fails, every VM carved by hand passes.
    verdicts = findings(tmp_path)
    for host in (h for h in before["hosts"] if h["name"] in HOSTS):
        for gpu in host["gpus"]:
            assert verdicts[("shared_direct", "%s %s" % (host["name"], gpu["pci_id"]))] == (
                "PASS" if gpu["graphics_type"] == "sharedDirect" else "FAIL")
        assert verdicts[("host_driver", host["name"])] == "PASS"
        bios = bmcs_before[host["name"]]["bios"]["current"]
        for check, attribute in (("bios_sriov", "SriovGlobalEnable"), ("bios_mmio_above_4g", "MmioAbove4Gb")):
            assert verdicts[(check, host["name"])] == ("PASS" if bios[attribute] == "Enabled" else "FAIL")
    assert [key for key, status in verdicts.items() if key[0] == "shared_direct" and status != "PASS"] == [
        ("shared_direct", "%s 0000:3b:00.0" % WRONG_HOST)]
    for vm in PROFILES:
        assert verdicts[("vgpu_profile", vm)] == verdicts[("memory_reserved", vm)] == "PASS"
        assert verdicts[("placement", vm)] == ("PASS" if vm in RUNNING else "WARN")  # WARN: powered off
    flagged = set(key for key, status in verdicts.items() if status == "FAIL")
    assert set(check for check, _object in flagged) == {"shared_direct", "bios_sriov", "bios_mmio_above_4g"}

    # The real run changes what the doctor flagged, and nothing else: every VM keeps its host and vGPU.
    run = site(lab, inventory, tmp_path)
    assert run.returncode == 0, run.stdout[-6000:]
    after = lab.state()
    assert placements(after) == placements(before)
    assert changes(before, after) == ["/hosts/%s/%s" % (WRONG_HOST, path) for path in (
        "gpus", "graphics_config/default_graphics_type", "graphics_config/device_types", "xorg_restarts")]
    assert [gpu["graphics_type"] for gpu in lab.host(WRONG_HOST)["gpus"]] == ["sharedDirect"]
    bmc_changes = changes(bmcs_before, bmc_truth(lab))
    assert sorted(set(path.split("/")[1] for path in bmc_changes)) == sorted(set(
        name for check, name in flagged if check.startswith("bios_")))
    assert all("/bios/pending/" in path or path.endswith("/jobs") for path in bmc_changes)
    verdicts = findings(tmp_path)
    assert [key for key, status in verdicts.items() if status == "FAIL"] == []
