# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest half of adopting a running datacenter (docs/adopt.md): gpu-cluster carved by hand as in test_adopt, and
the guests of its running vGPU VMs licensed by hand the way NVIDIA's guides have it (the GRID driver's package,
nouveau blacklisted, gridd.conf from its template with FeatureType=1, the client configuration token in
/etc/nvidia/ClientConfigToken, nvidia-gridd restarted), one of them left without its token. Taken over through the
vcenter_gpu plugin (gpu_guests, ansible_host from VMware Tools' guest IP; the connection in the user's group_vars):
the guest layer's driver and license and the doctor in check mode change nothing on the guests nor in /lab/state;
the doctor fails the unlicensed guest alone; a real run licenses it and leaves the others as they were (the same
package, files, mtimes, nvidia-gridd start and license).

Each guest is a lab guest container bound to its VM (``vgpu_vm``): its GRID driver stand-in asks the lab vCenter
which host the VM runs on and loads only under a vGPU Manager that accepts it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import time

import pytest
import yaml

from conftest import DEFAULT_TOPOLOGY, LAB_CONTROL, PORT_OFFSET, ROOT
from guest_run import PLAYBOOK
from test_adopt import carve_by_hand, changes, env, listed, user_inventory
from vsphere_direct import Direct

# The running VMs of test_adopt's carve (gpu-vm-01 and gpu-vm-04), and gpu-vm-02 started beside gpu-vm-01 (both
# grid_p40-8q on esxi-01's P40), each with a guest; gpu-vm-04's guest was left without its token.
LICENSED = ("gpu-vm-01", "gpu-vm-02")
UNLICENSED = "gpu-vm-04"
GUESTS = LICENSED + (UNLICENSED,)
# A vGPU VM of the carve that does not run: in gpu_guests (the plugin lists every vGPU VM), with no guest to reach.
STOPPED = "gpu-vm-07"
# SSH ports above the lab's guests at this worker's offset, clear of the other tests' guest containers.
PORT_ABOVE_LAB_GUESTS = 160
DRIVER_DEB = "nvidia-linux-grid-525_525.105.17_amd64.deb"  # R525 guest driver: the hosts run vGPU 15.2 (R525)
TOKEN = "client_configuration_token_05-26-2022-00-08-28.tok"
# gpu-vm-02's operator saved the same token under the date of another download and left it at mode 644: the token is
# kept under its name, given NVIDIA's mode 744, and nvidia-gridd is not restarted for it.
BY_OTHER_NAME, OTHER_NAME = "gpu-vm-02", "client_configuration_token_11-02-2026-09-15-00.tok"
ARTIFACTS = "/srv/lab-artifacts"
GUESTS_YML = os.path.join(ROOT, "playbooks", "guests.yml")
DOCTOR = os.path.join(ROOT, "playbooks", "doctor.yml")

# What a person following NVIDIA's guides does in a Linux guest, as root: the driver's Debian package through the
# package manager, nouveau blacklisted in /etc/modprobe.d/blacklist-nouveau.conf (NVIDIA Virtual GPU Software User
# Guide, "Installing the NVIDIA vGPU Software Graphics Driver on Linux"; the lab image has no /etc/modprobe.d, which
# a distribution has), gridd.conf copied from its template with
# FeatureType=1 for a vGPU, the token copied to /etc/nvidia/ClientConfigToken with mode 744 and nvidia-gridd
# restarted (NVIDIA License System, Client Licensing User Guide, "Configuring a Licensed Client on Linux":
# https://docs.nvidia.com/grid/latest/grid-licensing-user-guide/index.html#configuring-nls-licensed-client).
INSTALL_BY_HAND = """set -e
apt-get install -y --no-install-recommends {artifacts}/{deb} >/dev/null
mkdir -p /etc/modprobe.d
printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' >/etc/modprobe.d/blacklist-nouveau.conf
sed 's/^FeatureType=0$/FeatureType=1/' /etc/nvidia/gridd.conf.template >/etc/nvidia/gridd.conf
mkdir -p /etc/nvidia/ClientConfigToken
"""
TOKEN_BY_HAND = """set -e
cp {artifacts}/{token} /etc/nvidia/ClientConfigToken/{name}
chmod {mode} /etc/nvidia/ClientConfigToken/{name}
"""
RESTART_GRIDD = "systemctl restart nvidia-gridd\n"

# The ground truth of a guest, read with podman exec: the driver's package, every file the driver and license
# concern (mode, size, mtime, checksum), nvidia-gridd (state, start time, PID), the license the daemon holds and the
# stand-in's record of the driver's loads.
GROUND_TRUTH = r"""
dpkg-query -W -f '${Package} ${Version} ${Status}\n' 'nvidia-linux-grid-*' 2>/dev/null | sed 's/^/package /'
find /etc/nvidia /etc/modprobe.d /var/tmp/gpuops-grid-driver -xdev 2>/dev/null | sort | while read -r path; do
  if [ -f "$path" ]; then echo "file $path $(stat -c '%a %s %Y' "$path") $(sha1sum <"$path" | cut -c1-40)";
  else echo "file $path $(stat -c '%F %a' "$path")"; fi
done
echo "gridd $(systemctl show nvidia-gridd -p ActiveState -p UnitFileState -p MainPID \
  -p ActiveEnterTimestampMonotonic --value | tr '\n' ' ')"
echo "license $(cat /run/nvidia-gridd/license.json 2>/dev/null | tr -d '\n')"
echo "loads $(cat /var/lib/gpuops-lab/vgpu-loads.json 2>/dev/null | tr -d '\n')"
"""


@pytest.fixture
def lab(labs, tmp_path_factory):
    """The default topology with VMware Tools reporting a guest IP for the guests' VMs while they run (the guest
    containers are reached on the loopback, each on its own port)."""
    path = tmp_path_factory.getbasetemp() / "adopt-guests-topology.yml"
    if not path.exists():
        with open(DEFAULT_TOPOLOGY) as handle:
            topology = yaml.safe_load(handle)
        for vm in topology["datacenters"][0]["vms"]:
            if vm["name"] in GUESTS:
                vm["guest_ip"] = "127.0.0.1"
        path.write_text(yaml.safe_dump(topology, sort_keys=False))
    return labs(str(path))


@pytest.fixture
def guests(lab):
    """A guest container for each VM (``adopt-<VM>``), bound to it, by VM name; removed afterwards."""
    state_dir = os.path.join(ROOT, ".tmp", "adopt-guests-%d" % PORT_OFFSET)
    os.makedirs(state_dir, exist_ok=True)
    specs = [{"name": "adopt-" + vm, "vgpu_vm": vm,
              "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + PORT_ABOVE_LAB_GUESTS + index} for index, vm in enumerate(GUESTS)]
    started = LAB_CONTROL.start_guests(specs, state_dir, PORT_OFFSET, lab={
        "url": lab.services["vcenter"]["lab"], "cafile": lab.certificate,
        "catalog": os.path.join(lab.state_dir, "catalog.json")})
    try:
        yield dict([(vm, started["adopt-" + vm]) for vm in GUESTS], state_dir=state_dir)
    finally:
        LAB_CONTROL.stop_guests([guest["container"] for guest in started.values()])


def on_guest(guest, script):
    return LAB_CONTROL.podman("exec", guest["container"], "sh", "-c", script, check=False)


def license_by_hand(guests):
    for vm in GUESTS:
        script = INSTALL_BY_HAND + (TOKEN_BY_HAND if vm in LICENSED else "") + RESTART_GRIDD
        name, mode = (OTHER_NAME, "644") if vm == BY_OTHER_NAME else (TOKEN, "744")
        done = on_guest(guests[vm], script.format(artifacts=ARTIFACTS, deb=DRIVER_DEB, token=TOKEN, name=name, mode=mode))
        assert done.returncode == 0, (vm, done.stdout, done.stderr)
    for vm in LICENSED:
        assert license_status(guests[vm], wait_for="Licensed").startswith("Licensed ("), vm
    assert license_status(guests[UNLICENSED]) == "Unlicensed (Unrestricted)"


def license_status(guest, wait_for=None, seconds=60):
    """The vGPU's License Status in the guest's nvidia-smi -q, waiting up to ``seconds`` for one that starts with
    ``wait_for`` (nvidia-gridd takes a moment to acquire its license)."""
    deadline = time.monotonic() + seconds
    while True:
        query = on_guest(guest, "nvidia-smi -q").stdout
        status = next((line.split(":", 1)[1].strip() for line in query.splitlines()
                       if line.strip().startswith("License Status")), "")
        if wait_for is None or status.startswith(wait_for) or time.monotonic() > deadline:
            return status
        time.sleep(1)


def truth(guests):
    return dict((vm, on_guest(guests[vm], GROUND_TRUTH).stdout.splitlines()) for vm in GUESTS)


def guest_inventory(lab, guests, path):
    """docs/adopt.md's inventory, and what the user adds for the guests: how to reach them (group_vars/gpu_guests.yml
    and each guest's SSH port in host_vars) and the driver and token they run."""
    inventory = user_inventory(lab, path)
    state_dir = guests["state_dir"]
    (inventory / "group_vars" / "gpu_guests.yml").write_text(yaml.safe_dump({
        "ansible_user": "root", "ansible_python_interpreter": "/usr/bin/python3",
        "ansible_ssh_private_key_file": os.path.join(state_dir, LAB_CONTROL.GUEST_SSH_KEY),
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s"
                                   % os.path.join(state_dir, LAB_CONTROL.GUEST_KNOWN_HOSTS),
        "grid_driver_remote_src": "%s/%s" % (ARTIFACTS, DRIVER_DEB), "grid_driver_host_manager_version": "525.105.14",
        "grid_license_token_src": os.path.join(state_dir, "standins", TOKEN),
        "grid_license_timeout": 60, "grid_license_poll_interval": 1,
        # The lab's nvidia-smi stand-in answers the text query only (no XML was recorded).
        "nvidia_smi_query_format": "text"}))
    for vm in GUESTS:
        (inventory / "host_vars" / ("%s.yml" % vm)).write_text(yaml.safe_dump({"ansible_port": guests[vm]["ssh_port"]}))
    return inventory


# Each playbook run's output, also in .tmp/adopt-guests-<offset>/run-<n>.log.
RUNS = []


def playbook(lab, inventory, path, variables, *options):
    argv = [PLAYBOOK, "-i", str(inventory), "-e", json.dumps(variables), path] + list(options)
    proc = subprocess.run(argv, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)
    assert lab.vcenter_vars["vcenter_password"] not in proc.stdout
    RUNS.append(proc.stdout)
    with open(os.path.join(ROOT, ".tmp", "adopt-guests-%d" % PORT_OFFSET, "run-%d.log" % len(RUNS)), "w") as handle:
        handle.write(" ".join(argv) + "\n" + proc.stdout)
    return proc


def guest_layer(lab, inventory, *options):
    """The guest layer's driver and license: what makes a licensed guest."""
    return playbook(lab, inventory, GUESTS_YML, {}, "--tags", "grid_driver,grid_license", *options)


def doctor(lab, inventory, state_dir, *options):
    return playbook(lab, inventory, DOCTOR, {
        "doctor_output_dir": str(state_dir), "doctor_cluster_vgpu_state_dir": str(state_dir), "doctor_fail_on": "never",
        "doctor_verdict": False, "doctor_gather_bmc": False, "doctor_guest_nvidia_smi_format": "text"}, *options)


def guest_verdicts(state_dir):
    """The doctor's guest findings, by guest: {check: status}, and the remediations of those that failed."""
    with open(str(state_dir / "doctor.json")) as handle:
        found = json.load(handle)["findings"]
    verdicts = dict((vm, dict((f["check"], f["status"]) for f in found if f["object"] == vm and f["layer"] == "guest"))
                    for vm in GUESTS + (STOPPED,))
    fixes = dict((f["object"], f.get("remediation")) for f in found if f["object"] in GUESTS and f["status"] == "FAIL")
    return verdicts, fixes


def test_hand_licensed_guests_are_adopted_and_only_the_unlicensed_one_changes(lab, guests, tmp_path):
    carve_by_hand(lab)
    direct = Direct(lab)
    try:
        direct.power_on("gpu-vm-02")
    finally:
        direct.close()
    license_by_hand(guests)
    inventory = guest_inventory(lab, guests, tmp_path / "inventory")

    # The plugin finds the guests with their profiles and their address from VMware Tools.
    found = listed(inventory)
    hostvars = found["_meta"]["hostvars"]
    assert set(GUESTS) <= set(found["gpu_guests"]["hosts"])
    for vm in GUESTS:
        assert hostvars[vm]["ansible_host"] == "127.0.0.1", vm
        assert hostvars[vm]["vgpu_profile"] == lab.vm(vm)["vgpus"][0]["profile"], vm

    # Check mode: nothing changes on the guests nor in vCenter.
    state, guest_truth = lab.state(), truth(guests)
    checked = guest_layer(lab, inventory, "--check", "--diff")
    assert checked.returncode == 0, checked.stdout[-6000:]
    doctored = doctor(lab, inventory, tmp_path, "--check")
    assert doctored.returncode == 0, doctored.stdout[-6000:]
    assert truth(guests) == guest_truth
    assert changes(state, lab.state()) == []

    # The doctor's verdicts follow the guests' ground truth: every driver answers and suits the vGPU Manager; a guest
    # whose nvidia-smi shows its vGPU licensed passes (WARN: the lab's recorded license expired in 2022), the one
    # that shows it unlicensed fails with the remediation; the guest of the VM that does not run is not reached.
    verdicts, fixes = guest_verdicts(tmp_path)
    for vm in GUESTS:
        assert verdicts[vm]["guest_driver"] == "PASS" and verdicts[vm]["driver_compat"] == "PASS", (vm, verdicts[vm])
        shown = license_status(guests[vm])
        assert verdicts[vm]["license"] == ("FAIL" if shown.startswith("Unlicensed") else "WARN"), (vm, shown, verdicts)
    assert [vm for vm in GUESTS if "FAIL" in verdicts[vm].values()] == [UNLICENSED]
    assert "grid_license" in fixes[UNLICENSED], fixes
    assert lab.vm(STOPPED)["power_state"] == "poweredOff" and verdicts[STOPPED] == {"guest_driver": "WARN"}, verdicts
    # The check run's plan names what would change: the unlicensed guest, and the mode of the token kept under
    # another name; the VM that does not run is left out, not unreachable.
    changed = [line for line in checked.stdout.splitlines() if line.startswith("changed: [")]
    assert changed and all(line.startswith(("changed: [%s]" % UNLICENSED, "changed: [%s]" % BY_OTHER_NAME))
                           for line in changed), changed
    assert "unreachable=1" not in checked.stdout

    # The real run licenses the unlicensed guest: its token is placed and nvidia-gridd restarted, nothing else on it
    # changes. The licensed guests are left as they were (package, files and mtimes, the daemon's start), but for the
    # mode of the token kept under another name: same name, content and mtime, 744, nvidia-gridd not restarted.
    run = guest_layer(lab, inventory)
    assert run.returncode == 0 and "unreachable=1" not in run.stdout, run.stdout[-6000:]
    after = truth(guests)
    other = "file /etc/nvidia/ClientConfigToken/%s " % OTHER_NAME
    assert [line for line in after[BY_OTHER_NAME] if line.startswith(other)] == [
        line.replace(other + "644 ", other + "744 ") for line in guest_truth[BY_OTHER_NAME] if line.startswith(other)]
    assert [line for line in after[BY_OTHER_NAME] if not line.startswith(other)] == [
        line for line in guest_truth[BY_OTHER_NAME] if not line.startswith(other)]
    assert len([line for line in after[BY_OTHER_NAME] if line.startswith("file /etc/nvidia/ClientConfigToken/")]) == 1
    assert dict((vm, after[vm]) for vm in LICENSED if vm != BY_OTHER_NAME) == dict(
        (vm, guest_truth[vm]) for vm in LICENSED if vm != BY_OTHER_NAME)
    assert license_status(guests[UNLICENSED], wait_for="Licensed").startswith("Licensed (")
    moved = set(after[UNLICENSED]) ^ set(guest_truth[UNLICENSED])
    assert moved and all(line.startswith(("file /etc/nvidia/ClientConfigToken/", "gridd ", "license ", "loads "))
                         for line in moved), sorted(moved)
    tokens = [line.split()[1:3] for line in after[UNLICENSED] if line.startswith("file /etc/nvidia/ClientConfigToken/")]
    assert tokens == [["/etc/nvidia/ClientConfigToken/%s" % TOKEN, "744"]], tokens
    assert changes(state, lab.state()) == []

    doctored = doctor(lab, inventory, tmp_path)
    assert doctored.returncode == 0, doctored.stdout[-6000:]
    verdicts, fixes = guest_verdicts(tmp_path)
    assert fixes == {} and all(verdicts[vm]["license"] == "WARN" for vm in GUESTS), verdicts
