# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgmi diag output (JSON and text, DCGM 3.x and 4.x) and the DCGM check's verdict, on real recorded outputs
(tests/fixtures/dcgm); each assertion is what the recording itself shows."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _dcgm_diag

FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                         "fixtures", "dcgm"))


def read(name):
    path = os.path.join(FIXTURES, name)
    if not os.path.isfile(path):
        raise AssertionError("recorded output %s is missing; restore tests/fixtures from git" % path)
    with open(path) as handle:
        return handle.read()


A100_R2_333 = read("diag_r2_text_8xA100_sxm4_80gb_pass_dcgm3.3.3.txt")
H200_R1_318 = read("diag_r1_text_8xH200_persistence_fail_dcgm3.1.8.txt")
ONE_GPU_R4_3X = read("diag_r4_text_1gpu_persistence_fail_skips_dcgm3_nometadata.txt")
FOUR_GPU_R2_423 = read("diag_r2_text_4gpu_pcie_fail_internal_error_dcgm4.2.3.txt")
B200_R2_441 = read("diag_r2_text_8xB200_pcie_fail_internal_error_dcgm4.4.1_TRUNCATED.txt")
ONE_GPU_R2_442 = read("diag_r2_text_1gpu_pass_dcgm4.4.2.txt")
GB10_R3_442 = read("diag_r3_text_gb10_skips_dcgm4.4.2_TRUNCATED.txt")
GB10_R1_JSON_423 = read("diag_r1_json_gb10_software_fail_dcgm4.2.3.json")
DIAGNOSTIC_FRAGMENT_4X = read("diag_r3_json_FRAGMENT_8gpu_diagnostic_test_dcgm4.x.txt")

DEPLOYMENT_3X = ["Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
                 "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom"]


def by_name(parsed):
    return dict((test["name"], test) for test in parsed["tests"])


def test_dcgm_3_3_3_text_at_level_2_on_eight_a100s_passes():
    parsed = _dcgm_diag.parse_diag(A100_R2_333)
    assert (parsed["format"], parsed["version"], parsed["driver_version"]) == ("text", "3.3.3", "535.104.12")
    assert [test["name"] for test in parsed["tests"]] == DEPLOYMENT_3X + ["PCIe", "GPU Memory"]
    assert set(test["status"] for test in parsed["tests"]) == {"Pass"}
    tests = by_name(parsed)
    assert tests["PCIe"]["category"] == "Integration" and tests["PCIe"]["all"] == "Pass"
    assert tests["GPU Memory"]["category"] == "Hardware"
    check = _dcgm_diag.dcgm_check({"rc": 0, "stdout": A100_R2_333}, 2)
    assert check["status"] == "ok" and check["failures"] == []
    assert check["message"].startswith("DCGM 3.3.3 level 2: Denylist, NVML Library")


def test_dcgm_3_1_8_persistence_mode_failure_names_each_gpu_with_its_own_words():
    parsed = _dcgm_diag.parse_diag(H200_R1_318)
    assert parsed["version"] == "3.1.8"
    persistence = by_name(parsed)["Persistence Mode"]
    assert persistence["status"] == "Fail" and persistence["gpus"] == {}
    # One Error row over 22 table rows, six GPUs' messages joined by DCGM, the last cut off by DCGM itself.
    assert [message["gpus"] for message in persistence["messages"]] == [[str(gpu)] for gpu in range(6)]
    assert persistence["messages"][0]["text"] == (
        "Persistence mode for GPU 0 is currently disabled. The DCGM diagnostic requires peristence mode to be "
        "enabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root.")
    assert persistence["messages"][5]["text"].endswith("for GPU 5 is currently disabled. The DCGM diagnostic "
                                                       "requires peristence mod")
    check = _dcgm_diag.dcgm_check({"rc": 226, "stdout": H200_R1_318}, 1,
                                  gpus=[{"index": 3, "pci_bus_id": "00000000:5D:00.0"}])
    assert check["status"] == "failed"
    assert [(item["gpu"], item["test"]) for item in check["failures"]] == [
        (str(gpu), "Persistence Mode") for gpu in range(6)]
    assert "GPU 3 (00000000:5D:00.0) failed Persistence Mode: Persistence mode for GPU 3 is currently" \
        in check["message"]
    assert "Take these GPUs out of service" in check["message"]


def test_dcgm_3_level_4_without_metadata_skips_and_fails_one_gpu():
    parsed = _dcgm_diag.parse_diag(ONE_GPU_R4_3X)
    assert parsed["version"] is None
    tests = by_name(parsed)
    assert tests["Persistence Mode"]["status"] == "Fail"
    assert [tests[name]["all"] for name in ("PCIe", "GPU Memory", "Pulse Test", "Targeted Stress",
                                            "Targeted Power", "Memory Bandwidth")] == ["Skip"] * 6
    assert tests["Memtest"]["status"] == "Pass" and tests["Memtest"]["category"] == "Stress"
    check = _dcgm_diag.dcgm_check({"rc": 226, "stdout": ONE_GPU_R4_3X}, 4)
    assert check["status"] == "failed"
    assert check["message"].startswith("DCGM (version not shown) level 4: GPU 0 failed Persistence Mode: "
                                       "Persistence mode for GPU 0 is currently disabled.")


def test_dcgm_4_2_3_text_pcie_failure_without_a_failing_gpu_fails_the_test_as_a_whole():
    parsed = _dcgm_diag.parse_diag(FOUR_GPU_R2_423)
    assert (parsed["version"], parsed["driver_version"]) == ("4.2.3", "570.148.08")
    tests = by_name(parsed)
    assert [test["name"] for test in parsed["tests"]] == ["software", "memory", "pcie"]
    assert tests["memory"]["gpus"] == {"0": "Pass", "1": "Pass", "2": "Pass", "3": "Pass"}
    pcie = tests["pcie"]
    assert pcie["status"] == "Fail" and set(pcie["gpus"].values()) == {"Pass"}
    assert len(pcie["messages"]) == 4
    assert pcie["messages"][0]["text"] == ("There was an internal error during the test: 'A child process (152) "
                                           "exited with non-zero status 1' Check DCGM and system logs for errors. "
                                           "Reset GPU. Restart DCGM. Rerun diagnostics.")
    check = _dcgm_diag.dcgm_check({"rc": 226, "stdout": FOUR_GPU_R2_423}, 2)
    assert check["status"] == "failed"
    assert check["failures"][0]["gpu"] is None and check["failures"][0]["test"] == "pcie"
    assert check["message"].startswith("DCGM 4.2.3 level 2: all GPUs failed pcie: There was an internal error")


def test_dcgm_4_4_1_text_on_eight_b200s_without_the_first_line():
    parsed = _dcgm_diag.parse_diag(B200_R2_441)
    assert parsed["version"] == "4.4.1"
    tests = by_name(parsed)
    assert sorted(tests["software"]["gpus"]) == [str(gpu) for gpu in range(8)]
    assert tests["pcie"]["status"] == "Fail"
    assert tests["pcie"]["messages"][0]["text"].startswith("There was an internal error during the test: 'Output "
                                                           "of child process (11167) couldn't be parsed")


def test_dcgm_4_4_2_text_level_2_pass_on_one_gpu():
    check = _dcgm_diag.dcgm_check({"rc": 0, "stdout": ONE_GPU_R2_442}, 2)
    assert check["status"] == "ok"
    assert check["message"] == "DCGM 4.4.2 level 2: software, memory, pcie pass"
    assert check["tests"]["memory"] == {"status": "Pass", "gpus": {"0": "Pass"}}


def test_dcgm_4_4_2_level_3_that_skipped_all_but_software_passes_with_the_skips_named():
    check = _dcgm_diag.dcgm_check({"rc": 0, "stdout": GB10_R3_442}, 3)
    assert check["status"] == "ok"
    assert check["message"] == ("DCGM 4.4.2 level 3: software pass; skipped: memory, diagnostic, nvbandwidth, pcie, "
                                "memory_bandwidth, targeted_stress, targeted_power")


def test_dcgm_4_2_3_json_software_failure_keeps_dcgm_error_id_and_words():
    parsed = _dcgm_diag.parse_diag(GB10_R1_JSON_423)
    assert (parsed["format"], parsed["version"], parsed["driver_version"]) == ("json", "4.2.3", "580.82.09")
    software = parsed["tests"][0]
    assert (software["name"], software["category"], software["status"]) == ("software", "Deployment", "Fail")
    assert software["gpus"] == {"0": "Fail"}
    assert software["messages"] == [{"kind": "Warning", "gpus": ["0"], "error_id": 29, "text": (
        "Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode by running "
        "\"nvidia-smi -i <gpuId> -pm 1 \" as root.")}]
    check = _dcgm_diag.dcgm_check({"rc": 226, "stdout": GB10_R1_JSON_423}, 1)
    assert check["status"] == "failed" and check["format"] == "json"
    assert check["failures"] == [{"gpu": "0", "test": "software", "status": "Fail",
                                  "message": software["messages"][0]["text"]}]


def test_dcgm_4_json_test_object_with_capped_info_reads_every_gpu():
    # The post quotes one test object and ends with a comma: placed in a category of a document, as DCGM nests it.
    test = json.loads(DIAGNOSTIC_FRAGMENT_4X.strip().rstrip(","))
    document = json.dumps({"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [test]}]}})
    parsed = _dcgm_diag.parse_diag(document)
    diagnostic = parsed["tests"][0]
    assert diagnostic["status"] == "Pass" and diagnostic["messages"] == []
    assert diagnostic["gpus"] == dict((str(gpu), "Pass") for gpu in range(8))


def test_dcgm_3_json_shape_from_dcgm_source_reads_gpu_id_and_the_deployment_message():
    # Not a recording (none was found): DCGM 3.3.9's dcgmi/Diag.cpp writes a Deployment row's message under
    # "warnings" inside each "warnings" entry, and results keyed by "gpu_id".
    document = json.dumps({"DCGM GPU Diagnostic": {"test_categories": [
        {"category": "Deployment", "tests": [{"name": "Persistence Mode", "results": [
            {"status": "Fail", "gpu_id": 1, "warnings": [{"warnings": "Persistence mode for GPU 1 is disabled.",
                                                          "error_id": 29}]}]}]},
        {"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [
            {"gpu_id": "0", "status": "Pass"}, {"gpu_id": "1", "status": "Pass"}]}]}]},
        "version": "3.3.9", "Driver Version Detected": "550.54.15"})
    parsed = _dcgm_diag.parse_diag(document)
    assert (parsed["version"], parsed["driver_version"]) == ("3.3.9", "550.54.15")
    tests = by_name(parsed)
    assert tests["Persistence Mode"]["gpus"] == {"1": "Fail"}
    assert tests["Persistence Mode"]["messages"][0]["text"] == "Persistence mode for GPU 1 is disabled."
    assert tests["GPU Memory"]["status"] == "Pass"


@pytest.mark.parametrize("output, words", [
    ("", "neither its JSON nor its result table"),
    ("Error: Unable to complete diagnostic for group 0. Return: (-30)", "neither its JSON nor its result table"),
    ('{"DCGM Diagnostic": {"runtime_error": "Couldn\'t find the GPU"}}', "Couldn't find the GPU"),
    ('{"something": {}}', 'without "DCGM Diagnostic" or "DCGM GPU Diagnostic"'),
    ('{"DCGM Diagnostic": {"test_categories": []}}', "ran no test"),
    ('{"DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "software", '
     '"results": [{"entity_id": 0, "status": "Maybe"}]}]}]}}', "the result 'Maybe'"),
    ('{"DCGM Diagnostic": ', "does not parse"),
])
def test_shapes_dcgm_does_not_print_are_refused_with_what_was_seen(output, words):
    with pytest.raises(InputError) as error:
        _dcgm_diag.parse_diag(output)
    assert words in str(error.value)
    check = _dcgm_diag.dcgm_check({"rc": 1, "stdout": output}, 1)
    assert check["status"] == "failed" and "gave no result (rc 1)" in check["message"]


def test_a_table_row_of_another_shape_is_refused_not_read_as_a_pass():
    damaged = A100_R2_333.replace("| Inforom                   | Pass", "| Inforom                   | Good")
    with pytest.raises(InputError, match="does not explain .*Inforom"):
        _dcgm_diag.parse_diag(damaged)
    cut = A100_R2_333.replace("| PCIe                      | Pass - All                                     |",
                              "| PCIe | Pass - All |")
    with pytest.raises(InputError, match="unknown shape"):
        _dcgm_diag.parse_diag(cut)


def test_level_0_missing_dcgmi_and_no_driver():
    assert _dcgm_diag.dcgm_check({}, 0)["status"] == "skipped"
    assert _dcgm_diag.dcgm_check({"skipped": True, "msg": "not run in check mode"}, 2)["message"] == \
        "not run in check mode"
    missing = _dcgm_diag.dcgm_check({"rc": 2, "stdout": "", "msg": "[Errno 2] No such file or directory: 'dcgmi'"}, 1)
    assert missing["status"] == "failed" and "dcgmi is not installed" in missing["message"]
    assert "datacenter-gpu-manager-4-cuda" in missing["message"]


def test_a_run_that_skipped_everything_is_a_warning():
    skipped = GB10_R3_442.replace("| software                  | Pass", "| software                  | Skip").replace(
        "GPU0: Pass", "GPU0: Skip")
    check = _dcgm_diag.dcgm_check({"rc": 0, "stdout": skipped}, 3)
    assert check["status"] == "warning" and "skipped every test" in check["message"]


STANDIN = os.path.normpath(os.path.join(FIXTURES, "..", "..", "..", "lab", "guests", "standins", "dcgm", "dcgmi"))
# A real nvidia-smi -q -x of two RTX A5000 with ECC off, listed with minor numbers 1 then 0.
A5000_XML = os.path.join(FIXTURES, "..", "nvidia-smi", "xml_v13_2x_rtx_a5000_ecc_disabled_driver590.xml")


@pytest.fixture
def guest_smi(tmp_path):
    """An nvidia-smi whose -q -x is the recording, optionally with the second GPU's temperature raised."""
    def make(hot=None):
        with open(A5000_XML) as handle:
            xml = handle.read()
        if hot is not None:
            head, _sep, tail = xml.rpartition("<gpu_temp>")
            xml = head + "<gpu_temp>%d C" % hot + tail[tail.index("</gpu_temp>"):]
        (tmp_path / "q.xml").write_text(xml)
        script = tmp_path / "nvidia-smi"
        script.write_text('#!/bin/sh\ncat "%s"\n' % (tmp_path / "q.xml"))
        script.chmod(0o755)
        return dict(os.environ, PATH="%s:%s" % (tmp_path, os.environ["PATH"]))
    return make


def run_standin(env, *args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, STANDIN] + list(args), env=env, stdout=subprocess.PIPE,
                          universal_newlines=True, check=False)


def test_lab_standin_answers_in_both_layouts_what_the_parser_reads(guest_smi):
    env = guest_smi()
    for args in (("-j",), ()):
        run = run_standin(env, "diag", "-r", "2", *args)
        assert run.returncode == 0, run.stdout
        parsed = _dcgm_diag.parse_diag(run.stdout)
        assert parsed["format"] == ("json" if args else "text")
        assert (parsed["version"], parsed["driver_version"]) == ("4.2.3", "590.44.01")
        tests = by_name(parsed)
        assert list(tests) == ["software", "memory", "pcie"]
        # ECC is off on both GPUs of the recording: DCGM's memory test skips them.
        assert tests["memory"]["gpus"] == {"0": "Skip", "1": "Skip"} and tests["pcie"]["status"] == "Pass"
        assert _dcgm_diag.dcgm_check({"rc": 0, "stdout": run.stdout}, 2)["status"] == "ok"


def test_lab_standin_fails_a_gpu_above_its_slowdown_temperature_from_level_2(guest_smi):
    env = guest_smi(hot=97)
    run = run_standin(env, "diag", "-r", "2", "-j")
    assert run.returncode == 226
    check = _dcgm_diag.dcgm_check({"rc": run.returncode, "stdout": run.stdout}, 2)
    assert check["status"] == "failed"
    assert [(item["gpu"], item["test"]) for item in check["failures"]] == [("1", "pcie")]
    assert "GPU 1 failed pcie: Temperature 97 of GPU 1 exceeded user-specified maximum allowed temperature 95" \
        in check["message"]
    assert run_standin(env, "diag", "-r", "1").returncode == 0
    refused = run_standin(env, "diag", "-r", "1", "--host", "127.0.0.1:1")
    assert refused.returncode == 235 and "unable to establish a connection" in refused.stdout


def test_a_vgpu_guest_is_refused_with_what_to_do():
    check = _dcgm_diag.dcgm_check({}, 2, whole_gpus=False)
    assert check["status"] == "failed" and "runs only on whole GPUs" in check["message"]
    assert "set gpu_validate_dcgm_level to 0" in check["message"]
    assert _dcgm_diag.dcgm_check({}, 0, whole_gpus=False)["status"] == "skipped"
