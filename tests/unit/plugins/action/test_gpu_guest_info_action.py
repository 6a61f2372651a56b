# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_guest_info's reuse on the controller: what a read asks the guest for, how a partial read is kept, and that a
guest changed by anything since the kept read (its fingerprint differs) is read again."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess

from unittest.mock import MagicMock

from ansible_collections.gpuops.vgpu.plugins.action.gpu_guest_info import (
    ActionModule,
    fingerprint_command,
    merged,
    parse_fingerprint,
    read_plan,
    settled,
    unchanged,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import PROBES

LATER = [{"files": ["/etc/nvidia/gridd.conf", "/etc/profile.d/cuda.sh"]},
         {"files": ["/usr/bin/prometheus-node-exporter"], "services": ["prometheus-node-exporter"]}]
KEPT = {"gathered": list(PROBES), "errors": {}, "os": {"family": "Debian"},
        "files": {"/etc/nvidia/gridd.conf": {"exists": True}, "/etc/profile.d/cuda.sh": {"exists": False}},
        "services": {"prometheus-node-exporter": {"active": True}}}


def test_a_first_read_reads_every_probe_and_what_the_later_reads_of_the_play_ask_for():
    args, merge = read_plan({"gather": ["os", "driver"], "files": ["/etc/modprobe.d"]}, None, LATER)
    assert "gather" not in args and merge is False
    assert args["files"] == ["/etc/modprobe.d", "/etc/nvidia/gridd.conf", "/etc/profile.d/cuda.sh",
                             "/usr/bin/prometheus-node-exporter"]
    assert args["services"] == ["prometheus-node-exporter"]


def test_a_read_the_kept_state_covers_does_not_reach_the_guest():
    assert read_plan({"gather": ["os"], "files": ["/etc/nvidia/gridd.conf"],
                      "services": ["prometheus-node-exporter"]}, KEPT, LATER) == (None, False)
    assert read_plan({"gather": [], "files": []}, KEPT, []) == (None, False)


def test_a_read_that_asks_for_more_reads_only_what_is_missing():
    args, merge = read_plan({"gather": ["os"], "files": ["/etc/nvidia/gridd.conf", "/etc/ld.so.conf.d/cuda.conf"],
                             "services": ["gpuops-gpu-metrics.timer"], "query_format": "text"}, KEPT, LATER)
    assert merge is True
    assert args == {"gather": [], "files": ["/etc/ld.so.conf.d/cuda.conf"], "services": ["gpuops-gpu-metrics.timer"],
                    "query_format": "text"}


def test_missing_probes_are_read_in_their_order():
    kept = dict(KEPT, gathered=["os"])
    args, merge = read_plan({"gather": ["cudnn", "os", "cuda"]}, kept, [])
    assert merge is True and args["gather"] == ["cuda", "cudnn"]


def test_the_topology_probe_is_read_only_when_asked_for_and_then_with_every_probe():
    # A kept read of every probe has no topology: a server's read that asks for it reads only that.
    args, merge = read_plan({"gather": ["pci", "driver", "nvidia_smi", "topology"]}, KEPT, [])
    assert merge is True and args["gather"] == ["topology"]
    # A whole read (nothing kept) reads every probe and the topology asked for; without it, every probe only.
    args, merge = read_plan({"gather": ["nvidia_smi", "topology"]}, None, [])
    assert merge is False and args["gather"] == list(PROBES) + ["topology"]
    args, merge = read_plan({"gather": ["nvidia_smi"]}, None, [])
    assert "gather" not in args
    state = merged(KEPT, {"gathered": ["topology"], "topology": {"topology": None, "nvlink": None}, "errors": {}})
    assert state["gathered"] == list(PROBES) + ["topology"]


def test_a_partial_read_is_added_to_the_kept_state():
    addition = {"gathered": ["cuda"], "errors": {"files": {"msg": "Permission denied"}},
                "cuda": {"toolkits": []}, "files": {"/etc/ld.so.conf.d/cuda.conf": {"exists": True}}}
    state = merged(dict(KEPT, gathered=["os", "cudnn"]), addition)
    assert state["gathered"] == ["os", "cuda", "cudnn"]
    assert state["cuda"] == {"toolkits": []} and state["os"] == {"family": "Debian"}
    assert sorted(state["files"]) == ["/etc/ld.so.conf.d/cuda.conf", "/etc/nvidia/gridd.conf", "/etc/profile.d/cuda.sh"]
    assert state["services"] == KEPT["services"]
    assert state["errors"] == {"files": {"msg": "Permission denied"}}
    # The kept state itself is left as it was.
    assert KEPT["errors"] == {} and "/etc/ld.so.conf.d/cuda.conf" not in KEPT["files"]


GRIDD = "/etc/nvidia/gridd.conf"
OUTPUT = "\n".join([
    "@base", "F|/var/lib/dpkg/status|12 800 644 0 0 2026-01-01 10:00:00.100000000 +0000 2026-01-01 10:00:00.1 +0000 "
    "regular file", "0d6e2c0e-boot", "nvidia 56000000 0 - Live 0x0",
    "@files", "F|%s|40 24 644 0 0 2026-01-01 10:00:00.200000000 +0000 2026-01-01 10:00:00.2 +0000 regular file" % GRIDD,
    "L|%s|40 24 644 0 0 2026-01-01 10:00:00.200000000 +0000 2026-01-01 10:00:00.2 +0000 regular file" % GRIDD,
    "F|/etc/profile.d/cuda.sh|absent",
    "@services", "LoadState=loaded\nActiveState=active\nUnitFileState=enabled", "",
    "LoadState=not-found\nActiveState=inactive\nUnitFileState=", "@end"])
FILES = [GRIDD, "/etc/profile.d/cuda.sh"]
SERVICES = ["nvidia-gridd", "prometheus-node-exporter"]


def test_the_fingerprint_has_a_part_per_file_and_service_asked_for():
    print_ = parse_fingerprint(OUTPUT, FILES, SERVICES)
    assert sorted(print_) == ["base", "file:" + GRIDD, "file:/etc/profile.d/cuda.sh", "service:nvidia-gridd",
                              "service:prometheus-node-exporter"]
    assert print_["service:nvidia-gridd"] != print_["service:prometheus-node-exporter"]


def test_a_fingerprint_cut_short_or_without_stat_is_none():
    assert parse_fingerprint(OUTPUT.replace("@end", ""), FILES, SERVICES) is None
    assert parse_fingerprint("@base\nsh: stat: not found\n@files\n@services\n@end", [], []) is None


def test_any_change_to_what_was_read_makes_the_kept_read_unusable():
    before = parse_fingerprint(OUTPUT, FILES, SERVICES)
    assert unchanged({"fingerprint": before}, before)
    # Fewer parts then than now (a later read asks for another file): the parts taken then decide.
    assert unchanged({"fingerprint": {"base": before["base"]}}, before)
    for changed in (OUTPUT.replace("10:00:00.200000000", "10:00:00.200000001"),  # gridd.conf written, same size
                    OUTPUT.replace("F|/etc/profile.d/cuda.sh|absent",
                                   "F|/etc/profile.d/cuda.sh|41 9 644 0 0 x x regular file"),  # created
                    OUTPUT.replace("0d6e2c0e-boot", "77aa-boot"),  # rebooted
                    OUTPUT.replace("nvidia 56000000 0 - Live 0x0\n", ""),  # module unloaded
                    OUTPUT.replace("ActiveState=active", "ActiveState=inactive")):  # service stopped
        assert not unchanged({"fingerprint": before}, parse_fingerprint(changed, FILES, SERVICES)), changed
    assert not unchanged({"fingerprint": before}, None) and not unchanged({}, before)


COLLECTOR = "LoadState=loaded\nActiveState=%s\nUnitFileState=static\nFragmentPath=/etc/systemd/system/c.service\n" \
    "ActiveEnterTimestampMonotonic=0\nNeedDaemonReload=%s\nType=%s\nRemainAfterExit=%s"


def _with_units(*blocks):
    return OUTPUT.partition("@services")[0] + "@services\n" + "\n\n".join(blocks) + "\n@end"


def test_a_oneshot_service_running_or_not_is_the_same_guest_its_unit_is_not():
    def print_(state, reload="no", kind="oneshot", remain="no"):
        return parse_fingerprint(_with_units(COLLECTOR % (state, reload, kind, remain), COLLECTOR % (
            "active", "no", "simple", "no")), FILES, ["collector", "exporter"])

    idle = print_("inactive")
    # Its timer started it, it ran, it failed: none of it is a change to the guest.
    for state in ("activating", "failed", "inactive"):
        assert unchanged({"fingerprint": idle}, print_(state)), state
    # Its unit file changed without a daemon-reload: a change.
    assert not unchanged({"fingerprint": idle}, print_("inactive", reload="yes"))
    # A oneshot that remains after it exits, and any other service, keeps its state in the fingerprint.
    assert not unchanged({"fingerprint": print_("inactive", remain="yes")}, print_("active", remain="yes"))
    assert not unchanged({"fingerprint": print_("inactive", kind="simple")}, print_("activating", kind="simple"))
    exporter = parse_fingerprint(_with_units(COLLECTOR % ("inactive", "no", "oneshot", "no"), COLLECTOR % (
        "failed", "no", "simple", "no")), FILES, ["collector", "exporter"])
    assert exporter["service:exporter"] != idle["service:exporter"]
    assert exporter["service:collector"] == idle["service:collector"]


def test_the_fingerprint_command_sees_a_file_change_on_this_machine(tmp_path):
    probe = tmp_path / "probe"
    probe.write_text("a")

    def take():
        files = [str(probe), str(tmp_path / "absent")]
        out = subprocess.run(["/bin/sh", "-c", fingerprint_command(files, [])], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout
        return parse_fingerprint(out, files, [])

    first = take()
    assert first is not None and unchanged({"fingerprint": first}, take())
    probe.write_text("b")  # same size, within the same second
    assert not unchanged({"fingerprint": first}, take())


def _action(args, answers, guest, gpus=None, license_facts=None):
    """The action plugin for a task with ``args`` on a guest whose fingerprint command prints ``guest["output"]``
    and nvidia-smi reports ``gpus`` (one licensed vGPU by default); module runs are appended to ``answers``."""
    task = MagicMock(args=args, async_val=0, check_mode=False, _play=MagicMock(_uuid="play-1"))
    connection = MagicMock()
    connection._shell.tmpdir = "/tmp/x"
    action = ActionModule(task, connection, MagicMock(), MagicMock(), MagicMock(template=lambda value: value),
                          MagicMock())
    action._low_level_execute_command = lambda cmd, sudoable=True: {"rc": 0, "stdout": guest["output"]}

    def execute_module(module_name, module_args, task_vars):
        answers.append(module_args)
        gathered = module_args.get("gather", list(PROBES))
        state = {"gathered": gathered, "errors": {}, "os": {"family": "Debian"},
                 "nvidia_smi": {"present": True,
                                "gpus": gpus or [{"pci_bus_id": "00000000:02:00.0", "licensed": True}]},
                 "license": dict(license_facts or {}, licensed=not gpus),
                 "files": dict((path, {"exists": True}) for path in module_args.get("files", [])),
                 "services": dict((name, {"active": True}) for name in module_args.get("services", []))}
        return {"changed": False, "gpu_guest": dict((name, value) for name, value in state.items()
                                                    if name in gathered or name not in PROBES)}

    action._execute_module = execute_module
    return action


def test_a_read_is_reused_until_the_guest_changes_whoever_changed_it():
    guest = {"output": OUTPUT}
    runs = []
    args = {"gather": ["os"], "files": [GRIDD], "services": ["nvidia-gridd"], "reuse": True}
    task_vars = {}
    first = _action(args, runs, guest).run(task_vars=task_vars)
    assert first["reused"] is False and len(runs) == 1
    task_vars.update(first["ansible_facts"])
    second = _action(args, runs, guest).run(task_vars=task_vars)
    assert second["reused"] is True and len(runs) == 1
    # A task that never said so rewrote gridd.conf: the next read reads the whole guest again.
    guest["output"] = OUTPUT.replace("10:00:00.200000000", "10:00:00.300000000")
    third = _action(args, runs, guest).run(task_vars=task_vars)
    assert third["reused"] is False and len(runs) == 2 and "gather" not in runs[1]
    task_vars.update(third["ansible_facts"])
    assert _action(args, runs, guest).run(task_vars=task_vars)["reused"] is True and len(runs) == 2


def test_a_guest_whose_fingerprint_cannot_be_taken_is_always_read():
    guest = {"output": "@base\nsh: 1: stat: not found\n@files\n@services\n@end"}
    runs = []
    args = {"gather": ["os"], "reuse": True}
    task_vars = dict(_action(args, runs, guest).run(task_vars={})["ansible_facts"])
    assert _action(args, runs, guest).run(task_vars=task_vars)["reused"] is False and len(runs) == 2


def test_moving_gpu_guest_info_changes_still_reads_the_guest_again():
    guest = {"output": OUTPUT}
    runs = []
    args = {"gather": ["os"], "reuse": True}
    task_vars = dict(_action(args, runs, guest).run(task_vars={})["ansible_facts"])
    task_vars["gpu_guest_info_changes"] = 1
    assert _action(args, runs, guest).run(task_vars=task_vars)["reused"] is False and len(runs) == 2


UNLICENSED = [{"pci_bus_id": "00000000:02:00.0", "license_status": "Unlicensed (Unrestricted)", "licensed": False}]
LICENSE = {"service": {"active": True}, "feature_type": 1, "tokens": [{"name": "client_configuration_token.tok"}],
           "licensed": False}


def _read_with(gpus, license_facts=None):
    state = dict(KEPT, nvidia_smi={"present": True, "gpus": gpus})
    if license_facts is None:
        state.update(gathered=[name for name in PROBES if name != "license"])
        state.pop("license", None)
    else:
        state["license"] = license_facts
    return state


def test_a_license_nvidia_gridd_is_still_to_acquire_is_not_kept_for_later_reads():
    kept = settled(_read_with(UNLICENSED, LICENSE))
    assert "nvidia_smi" not in kept and "license" not in kept
    assert kept["gathered"] == [name for name in PROBES if name not in ("nvidia_smi", "license")]
    assert kept["os"] == KEPT["os"] and kept["files"] == KEPT["files"]
    # Without the license probe, nvidia-gridd may be acquiring it.
    assert "nvidia_smi" not in settled(_read_with(UNLICENSED))


def test_a_license_that_no_running_daemon_is_acquiring_is_kept():
    for facts in (dict(LICENSE, feature_type=0), dict(LICENSE, feature_type=None),
                  dict(LICENSE, service={"active": False}), dict(LICENSE, tokens=[])):
        state = _read_with(UNLICENSED, facts)
        assert settled(state) is state, facts
    licensed = _read_with([dict(UNLICENSED[0], license_status="Licensed (Expiry: 2026-12-31 0:0:0 GMT)",
                                licensed=True)], dict(LICENSE, licensed=True))
    assert settled(licensed) is licensed
    # A GPU passed through whole has no license to acquire.
    whole = _read_with([{"pci_bus_id": "00000000:02:00.0", "licensed": None}])
    assert settled(whole) is whole
    assert settled(None) is None


def test_a_fabric_waiting_for_fabric_manager_is_not_kept_for_later_reads():
    gpus = [{"pci_bus_id": "00000000:18:00.0", "licensed": None, "fabric_state": "Completed",
             "fabric_status": "Success"},
            {"pci_bus_id": "00000000:2A:00.0", "licensed": None, "fabric_state": "In Progress",
             "fabric_status": None}]
    kept = settled(_read_with(gpus, dict(LICENSE, service={"active": False}, tokens=[])))
    assert "nvidia_smi" not in kept and "nvidia_smi" not in kept["gathered"]
    assert "license" in kept["gathered"] and kept["os"] == KEPT["os"]
    ready = _read_with([dict(gpus[0]), dict(gpus[1], fabric_state="Completed", fabric_status="Success")])
    assert settled(ready) is ready


def test_a_kept_read_caught_while_the_license_was_on_its_way_reads_only_nvidia_smi_again():
    guest = {"output": OUTPUT}
    runs = []
    task_vars = {}
    first = _action({"gather": ["os"], "reuse": True}, runs, guest, gpus=UNLICENSED, license_facts=LICENSE)
    task_vars.update(first.run(task_vars=task_vars)["ansible_facts"])
    # What does not depend on the license is still answered from the kept read.
    assert _action({"gather": ["os", "driver"], "reuse": True}, runs, guest).run(task_vars=task_vars)["reused"]
    assert len(runs) == 1
    # A read of nvidia-smi goes to the guest for nvidia-smi alone, and what it found is kept.
    again = _action({"gather": ["os", "nvidia_smi"], "reuse": True}, runs, guest).run(task_vars=task_vars)
    assert again["reused"] is False and runs[1]["gather"] == ["nvidia_smi"]
    assert again["gpu_guest"]["os"] == {"family": "Debian"} and again["gpu_guest"]["nvidia_smi"]["gpus"][0]["licensed"]
    task_vars.update(again["ansible_facts"])
    assert _action({"gather": ["nvidia_smi"], "reuse": True}, runs, guest).run(task_vars=task_vars)["reused"]
    assert len(runs) == 2
