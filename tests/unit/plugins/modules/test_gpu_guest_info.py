# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_guest_info's real main() on fake guest trees, its commands answered from the recorded nvidia-smi outputs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.module_utils import basic
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest import gpu_state
from ansible_collections.gpuops.vgpu.plugins.modules import gpu_guest_info
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_args import patch_module_args
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.guest.guest_trees import TOKEN, FakeGuest


@pytest.fixture
def guest(tmp_path, monkeypatch):
    """A fake guest that the module reads as its root; run_command answers from it and records the environment."""
    fake = FakeGuest(tmp_path / "guest")
    fake.environments = []
    monkeypatch.setattr(gpu_state, "ROOT", fake.root)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    def run_command(_module, args, **kwargs):
        fake.environments.append(kwargs.get("environ_update"))
        return fake.run(args)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return fake


def run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            gpu_guest_info.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def licensed_guest(fake):
    fake.debian(packages=[("nvidia-linux-grid-510", "510.47.03")]).grid_driver().licensed()
    fake.cuda().cuda_environment().cudnn_header("/usr/local/cuda-11.6/include", "8.9.7.29")
    return fake


def test_everything_in_one_read(guest, capsys):
    licensed_guest(guest)
    code, result = run({}, capsys)
    assert code == 0 and result["changed"] is False and "ansible_facts" not in result
    state = result["gpu_guest"]
    assert state["gathered"] == ["os", "pci", "packages", "driver", "license", "nvidia_smi", "cuda", "cudnn",
                                 "container_toolkit"]
    assert state["errors"] == {}
    assert (state["os"]["family"], state["driver"]["format"], state["driver"]["version"]) == (
        "Debian", "deb", "510.47.03")
    assert (state["license"]["licensed"], state["license"]["expiry"]) == (True, "2022-05-27T00:08:28Z")
    assert state["nvidia_smi"]["vgpu_profiles"] == ["grid_a100-4c"]
    assert (state["cuda"]["on_path"]["version"], state["cudnn"]["version"]) == ("11.6.2", "8.9.7")
    assert set(env["LC_ALL"] for env in guest.environments) == {"C"}
    assert sorted(guest.calls) == sorted([
        "lspci -nnk -d 10de:", "modinfo nvidia",
        "systemctl show nvidia-gridd.service --no-pager"
        " --property=LoadState,ActiveState,SubState,UnitFileState,ActiveEnterTimestampMonotonic,NeedDaemonReload,ExecStart",
        "timedatectl show --property=NTPSynchronized --value", "nvidia-smi -q -x", "nvidia-smi -q"])
    assert TOKEN.strip() not in json.dumps(result) and TOKEN.split(".")[2].strip() not in json.dumps(result)


def test_check_mode_gather_and_set_facts(guest, capsys):
    licensed_guest(guest)
    code, result = run({"gather": ["license"], "set_facts": True, "_ansible_check_mode": True}, capsys)
    assert code == 0 and result["changed"] is False
    state = result["gpu_guest"]
    assert result["ansible_facts"] == {"gpu_guest": state}
    assert state["gathered"] == ["license"] and "nvidia_smi" not in state and "driver" not in state
    assert [token["mode"] for token in state["license"]["tokens"]] == ["0744"]


def test_bare_guest_and_explicit_nvidia_smi_path(guest, capsys):
    guest.debian()
    code, result = run({"gather": ["driver", "nvidia_smi"], "nvidia_smi_path": "/opt/nvidia/bin/nvidia-smi"}, capsys)
    assert code == 0
    state = result["gpu_guest"]
    assert (state["driver"]["installed"], state["nvidia_smi"]["present"], state["nvidia_smi"]["kind"]) == (
        False, False, "not_installed")
    assert state["nvidia_smi"]["path"] == "/opt/nvidia/bin/nvidia-smi" and state["errors"] == {}


def test_a_failing_probe_does_not_fail_the_module(guest, capsys):
    licensed_guest(guest)
    guest.answers["lspci -nnk -d 10de:"] = (1, "", "lspci: Unable to load libkmod resources: error -2\n")
    code, result = run({"gather": ["pci", "driver"]}, capsys)
    assert code == 0 and "failed" not in result
    state = result["gpu_guest"]
    assert state["pci"] is None and state["driver"]["version"] == "510.47.03"
    assert state["errors"] == {"pci": {"msg": "/usr/bin/lspci -nnk -d 10de: exited with 1: lspci: Unable to load "
                                              "libkmod resources: error -2"}}


def test_bad_gather_value_is_refused_before_reading(guest, capsys):
    licensed_guest(guest)
    code, result = run({"gather": ["gpus"]}, capsys)
    assert code == 1 and result["failed"] is True and "gpus" in result["msg"] and guest.calls == []
