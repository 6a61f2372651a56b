# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_smi_info's real code against a stand-in nvidia-smi that prints captured outputs and real error texts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _smi_info
from ansible_collections.gpuops.vgpu.plugins.modules import nvidia_smi_info
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_args import patch_module_args
from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import fixture_path


DRIVER_DOWN = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
               "latest NVIDIA driver is installed and running.\n\n")
NO_DEVICES = "No devices were found\n"
MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n"
NO_VGPU = "No supported devices in vGPU mode\n"
WINDOWS_TOPO = "ERROR: Option -m is missing its value\n"
UNKNOWN_ARGS = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"

# Prints the answer the scenario file holds for its arguments (a fixture file and/or literal text, an exit code)
# and logs every call, so tests can assert which commands the module ran.
STAND_IN = """#!{python}
import json
import sys

with open({scenario!r}) as handle:
    scenario = json.load(handle)
args = " ".join(sys.argv[1:])
with open({calls!r}, "a") as handle:
    handle.write(args + "\\n")
answer = scenario.get(args, {{"stdout": {unknown!r}, "rc": 2}})
if "fixture" in answer:
    with open(answer["fixture"]) as handle:
        sys.stdout.write(handle.read())
sys.stdout.write(answer.get("stdout", ""))
sys.stderr.write(answer.get("stderr", ""))
sys.exit(answer.get("rc", 0))
"""


def fixture(name):
    return {"fixture": fixture_path(name)}


def fixture_text(name):
    with open(fixture(name)["fixture"]) as handle:
        return handle.read()


class StandIn:
    def __init__(self, directory, scenario):
        os.makedirs(str(directory))
        self.path = os.path.join(str(directory), "nvidia-smi")
        self._calls = os.path.join(str(directory), "calls.log")
        scenario_path = os.path.join(str(directory), "scenario.json")
        with open(scenario_path, "w") as handle:
            json.dump(scenario, handle)
        with open(self.path, "w") as handle:
            handle.write(STAND_IN.format(python=sys.executable, scenario=scenario_path, calls=self._calls,
                                         unknown=UNKNOWN_ARGS))
        os.chmod(self.path, os.stat(self.path).st_mode | stat.S_IXUSR)

    def calls(self):
        if not os.path.exists(self._calls):
            return []
        with open(self._calls) as handle:
            return handle.read().splitlines()


@pytest.fixture
def smi(tmp_path, monkeypatch):
    """Installs a stand-in nvidia-smi as the only one on PATH; the module's search dirs are emptied."""
    monkeypatch.setattr(_smi_info, "SEARCH_DIRS", [])
    count = [0]

    def install(scenario, on_path=True):
        count[0] += 1
        stand_in = StandIn(tmp_path / ("bin%d" % count[0]), scenario)
        monkeypatch.setenv("PATH", os.path.dirname(stand_in.path) if on_path else str(tmp_path / "empty"))
        return stand_in

    return install


def run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            nvidia_smi_info.main()
    result = json.loads(capsys.readouterr().out)
    return exited.value.code, result


def host_vgpu_xml():
    """The T4's captured XML, switched to what a vGPU host prints (the fixtures hold no vGPU host XML)."""
    text = fixture_text("xml_v11_tesla_t4_passthrough_ecc_on_driver515_REFORMATTED.xml")
    text = text.replace("<virtualization_mode>Pass-Through</virtualization_mode>",
                        "<virtualization_mode>Host VGPU</virtualization_mode>")
    return text.replace("<host_vgpu_mode>N/A</host_vgpu_mode>", "<host_vgpu_mode>Non SR-IOV</host_vgpu_mode>")


VGPU_QUERY = """GPU 00000000:00:1E.0
    Active vGPUs                          : 1
    vGPU ID                               : 3251634190
        VM UUID                           : 564d2c0e-77a1-4b3e-9f1d-6e2a0c9b8d71
        VM Name                           : cuda-guest-01
        vGPU Name                         : GRID T4-4C
        vGPU Type                         : 230
        Guest Driver Version              : 535.104.05
        License Status                    : Licensed (Expiry: 2025-6-30 23:59:1 GMT)
        Placement ID                      : N/A
        FB Memory Usage
            Total                         : 4096 MiB
"""


def test_default_gather_on_a_mig_gpu(smi, capsys):
    stand_in = smi({
        "-q -x": fixture("xml_v12_a100_sxm4_80gb_mig_enabled_driver535_REFORMATTED.xml"),
        "topo -m": fixture("topo_m_1xH100_ansi_escapes_driver590.txt"),
        "nvlink -s": fixture("nvlink_status_a10_empty_output.txt"),
        "mig -lgip": fixture("mig_lgip_a100_pcie_40gb_esxi_driver510.txt"),
        "mig -lgi": fixture("mig_lgi_a100_pcie_40gb_4instances_esxi_driver510.txt"),
        "-L": fixture("L_list_gpus_a100_with_mig_device_driver510.txt"),
    })
    code, result = run({}, capsys)
    assert code == 0 and result["changed"] is False
    facts = result["nvidia_smi"]
    assert stand_in.calls() == ["-q -x", "topo -m", "nvlink -s", "-L", "mig -lgip", "mig -lgi"]
    assert (facts["present"], facts["path"], facts["driver_version"]) == (True, stand_in.path, "535.54.03")
    assert facts["gathered"] == ["topology", "nvlink", "list", "mig"]
    assert facts["errors"] == {} and facts["vgpu"] is None
    assert [g["mig_mode_current"] for g in facts["gpus"]] == [True]
    assert len(facts["mig"]["gpu_instance_profiles"]) == 6 and len(facts["mig"]["gpu_instances"]) == 4
    assert facts["nvlink"] == {"gpus": []}
    assert facts["topology"]["cpu_affinity"] == {"GPU0": "0-19"}
    assert facts["list"]["gpus"][0]["mig_devices"][0]["uuid"] == "MIG-b6cd45f2-9655-5269-9b96-65446729d5dc"
    assert "ansible_facts" not in result


def test_default_gather_on_a_vgpu_host_adds_vgpu(smi, capsys):
    stand_in = smi({
        "-q -x": {"stdout": host_vgpu_xml()},
        "nvlink -s": {"stdout": ""},
        "-L": {"stdout": "GPU 0: Tesla T4 (UUID: GPU-d37e67a5-91dd-3774-a5cb-99096249601a)\n"},
        "vgpu -q": {"stdout": VGPU_QUERY},
    })
    code, result = run({}, capsys)
    facts = result["nvidia_smi"]
    assert code == 0
    assert stand_in.calls() == ["-q -x", "topo -m", "nvlink -s", "-L", "vgpu -q"]
    assert (facts["gpus"][0]["virtualization_mode"], facts["gpus"][0]["host_vgpu_mode"]) == ("Host VGPU", "Non SR-IOV")
    vgpu = facts["vgpu"]["gpus"][0]["vgpus"][0]
    assert (vgpu["vm_name"], vgpu["vgpu_name"], vgpu["licensed"], vgpu["license_expiry"]) == (
        "cuda-guest-01", "GRID T4-4C", True, "2025-06-30T23:59:01Z")
    # This stand-in, like a host whose nvidia-smi lacks it, does not know "topo -m": recorded, not fatal.
    assert facts["topology"] is None
    assert facts["errors"] == {"topology": {"kind": "not_supported", "msg": UNKNOWN_ARGS.strip(), "rc": 2,
                                            "command": "nvidia-smi topo -m"}}


def test_explicit_gather_vgpu_on_a_host_without_vgpu(smi, capsys):
    stand_in = smi({
        "-q -x": fixture("xml_v11_tesla_t4_passthrough_ecc_on_driver515_REFORMATTED.xml"),
        "vgpu -q": {"stdout": NO_VGPU, "rc": 6},
    })
    code, result = run({"gather": ["vgpu"]}, capsys)
    facts = result["nvidia_smi"]
    assert code == 0 and stand_in.calls() == ["-q -x", "vgpu -q"]
    assert facts["gathered"] == ["vgpu"] and facts["vgpu"] is None
    assert facts["errors"]["vgpu"] == {"kind": "not_supported", "msg": NO_VGPU.strip(), "rc": 6,
                                       "command": "nvidia-smi vgpu -q"}
    assert facts["gpus"][0]["name"] == "Tesla T4"


def test_windows_guest_topology_error_and_license(smi, capsys):
    stand_in = smi({
        "-q -x": fixture("xml_v11_grid_p4-1q_vgpu_guest_licensed_windows_driver513.xml"),
        "topo -m": {"stdout": WINDOWS_TOPO, "rc": 255},
        "nvlink -s": {"stdout": ""},
        "-L": {"stdout": "GPU 0: GRID P4-1Q (UUID: GPU-1b1ea7c7-1c4b-ed49-1c72-26c65f2dd207)\n"},
    })
    code, result = run({"gather": ["topology", "nvlink", "list"]}, capsys)
    facts = result["nvidia_smi"]
    assert code == 0 and stand_in.calls() == ["-q -x", "topo -m", "nvlink -s", "-L"]
    assert facts["errors"]["topology"]["kind"] == "not_supported" and facts["errors"]["topology"]["rc"] == 255
    guest = facts["gpus"][0]
    assert (guest["license_status"], guest["licensed"], guest["license_expiry"]) == (
        "Licensed", True, "2022-09-22T06:57:30Z")
    assert facts["list"]["gpus"][0]["uuid"] == guest["uuid"]


def test_empty_gather_runs_only_the_query_and_sets_facts(smi, capsys):
    stand_in = smi({"-q -x": fixture("xml_v13_2x_rtx_a5000_ecc_disabled_driver590.xml")})
    code, result = run({"gather": [], "set_facts": True}, capsys)
    assert code == 0 and stand_in.calls() == ["-q -x"]
    facts = result["nvidia_smi"]
    assert result["ansible_facts"] == {"nvidia_smi": facts}
    assert [g["pci_bus_id"] for g in facts["gpus"]] == ["00000000:81:00.0", "00000000:C1:00.0"]
    assert all(facts[name] is None for name in ("topology", "nvlink", "list", "vgpu", "mig"))


def test_text_query_format_reads_a_licensed_vgpu_guest(smi, capsys):
    stand_in = smi({"-q": fixture("q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt")})
    code, result = run({"gather": [], "query_format": "text"}, capsys)
    assert code == 0 and stand_in.calls() == ["-q"]
    gpu = result["nvidia_smi"]["gpus"][0]
    assert result["nvidia_smi"]["driver_version"] == "510.47.03"
    assert (gpu["virtualization_mode"], gpu["licensed"], gpu["license_expiry"]) == (
        "VGPU", True, "2022-05-27T00:08:28Z")


def test_check_mode_reads_the_same(smi, capsys):
    stand_in = smi({"-q -x": fixture("xml_v12_quadro_p2000_pascal_driver525.xml")})
    code, result = run({"gather": [], "_ansible_check_mode": True}, capsys)
    assert code == 0 and result["changed"] is False and stand_in.calls() == ["-q -x"]
    assert result["nvidia_smi"]["gpus"][0]["name"] == "Quadro P2000"


def test_stderr_lines_become_warnings(smi, capsys):
    smi({"-q -x": dict(fixture("xml_v12_quadro_p2000_pascal_driver525.xml"),
                       stderr="WARNING: infoROM is corrupted at gpu 0000:17:00.0\n")})
    code, result = run({"gather": []}, capsys)
    assert code == 0
    assert result["nvidia_smi"]["warnings"] == ["WARNING: infoROM is corrupted at gpu 0000:17:00.0"]


@pytest.mark.parametrize("stdout, rc, kind", [
    (DRIVER_DOWN, 9, "driver_unreachable"),
    (NO_DEVICES, 6, "no_devices"),
    (MISMATCH, 18, "driver_library_mismatch"),
])
def test_driver_errors_fail_with_their_kind(smi, capsys, stdout, rc, kind):
    stand_in = smi({"-q -x": {"stdout": stdout, "rc": rc}})
    code, result = run({}, capsys)
    assert code == 1 and result["failed"] is True
    assert (result["kind"], result["rc"], result["command"], result["path"]) == (
        kind, rc, "nvidia-smi -q -x", stand_in.path)
    own_words = " ".join(line.strip() for line in stdout.splitlines() if line.strip())
    assert result["msg"].startswith(own_words + " ") and len(result["msg"]) > len(own_words) + 20
    assert stand_in.calls() == ["-q -x"]


@pytest.mark.parametrize("stdout, rc, kind", [
    (DRIVER_DOWN, 9, "driver_unreachable"),
    (NO_DEVICES, 6, "no_devices"),
    (MISMATCH, 18, "driver_library_mismatch"),
])
def test_fail_on_missing_false_reports_absence(smi, capsys, stdout, rc, kind):
    stand_in = smi({"-q -x": {"stdout": stdout, "rc": rc}})
    code, result = run({"fail_on_missing": False, "set_facts": True}, capsys)
    assert code == 0 and result["changed"] is False and "failed" not in result
    facts = result["nvidia_smi"]
    assert facts == {"present": False, "kind": kind, "path": stand_in.path, "gpus": [], "errors": {},
                     "msg": " ".join(line.strip() for line in stdout.splitlines() if line.strip())}
    assert result["ansible_facts"]["nvidia_smi"] == facts


def test_not_installed(smi, capsys):
    smi({}, on_path=False)
    code, result = run({}, capsys)
    assert code == 1 and result["kind"] == "not_installed" and "nvidia-smi is not in PATH" in result["msg"]
    code, result = run({"fail_on_missing": False}, capsys)
    assert code == 0
    assert (result["nvidia_smi"]["present"], result["nvidia_smi"]["kind"], result["nvidia_smi"]["path"]) == (
        False, "not_installed", None)


def test_path_option(smi, tmp_path, capsys):
    stand_in = smi({"-q -x": fixture("xml_v11_a10g_passthrough_ecc_on_driver515_REFORMATTED.xml")}, on_path=False)
    code, result = run({"path": stand_in.path, "gather": []}, capsys)
    assert code == 0 and result["nvidia_smi"]["path"] == stand_in.path and stand_in.calls() == ["-q -x"]
    assert result["nvidia_smi"]["gpus"][0]["name"] == "NVIDIA A10G"
    missing = str(tmp_path / "nowhere" / "nvidia-smi")
    code, result = run({"path": missing}, capsys)
    assert code == 1 and result["kind"] == "not_installed" and missing in result["msg"]
    code, result = run({"path": missing, "fail_on_missing": False}, capsys)
    assert code == 0 and result["nvidia_smi"]["path"] == missing and result["nvidia_smi"]["present"] is False


def test_unparsable_output_fails_even_without_fail_on_missing(smi, capsys):
    smi({"-q -x": {"stdout": "<nvidia_smi_log><gpu id='00000000:01:00.0'>"}})
    code, result = run({"fail_on_missing": False}, capsys)
    assert code == 1 and result["kind"] == "unparsable"


def test_bad_gather_value_is_refused_before_running(smi, capsys):
    stand_in = smi({"-q -x": fixture("xml_v12_quadro_p2000_pascal_driver525.xml")})
    code, result = run({"gather": ["topo"]}, capsys)
    assert code == 1 and "topo" in result["msg"] and stand_in.calls() == []
