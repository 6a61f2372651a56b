# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_validate's verdicts from a guest read built on recorded nvidia-smi outputs and the checks' command outcomes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans
from ansible_collections.gpuops.vgpu.plugins.module_utils import nvidia_smi
from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read as read_fixture

LICENSED = "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"
UNLICENSED = "q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt"
MARKER = "gpuops-validate: compiled"
PARAMS = {"license": True, "vgpu_profile": "grid_a100-4c", "nvcc": True, "cuda_home": "/usr/local/cuda",
          "cuda_version": "", "cuda_program": True, "marker": MARKER, "nvenc": True, "nvenc_required": False,
          "ffmpeg": "ffmpeg", "nvenc_encoder": "h264_nvenc", "pytorch_python": "/usr/bin/python3"}
NVCC_116 = {"rc": 0, "stdout": "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2022 NVIDIA Corporation\n"
                               "Built on Thu_Feb_10_18:23:41_PST_2022\nCuda compilation tools, release 11.6, V11.6.124\n"
                               "Build cuda_11.6.r11.6/compiler.30978841_0\n", "stderr": ""}
PROGRAM_PASS = {"rc": 0, "stdout": MARKER + "\nDevice 0: GRID A100-4C\nPASS\n", "stderr": ""}
NVENC_REFUSED = {"rc": 1, "stdout": "", "stderr": (
    "[h264_nvenc @ 0x55d0c47e2f40] OpenEncodeSessionEx failed: unsupported device (2): (no details)\n"
    "[h264_nvenc @ 0x55d0c47e2f40] No capable devices found\n"
    "Error initializing output stream 0:0 -- Error while opening encoder for output stream #0:0\nConversion failed!\n")}
TORCH_OK = {"rc": 0, "stdout": json.dumps({"torch": "1.12.0", "cuda": "11.6", "available": True,
                                           "devices": ["GRID A100-4C"]}), "stderr": ""}


def guest(fixture=LICENSED):
    facts = nvidia_smi.parse_query(read_fixture(fixture))
    facts.update(present=True)
    return {"gathered": ["nvidia_smi"], "errors": {}, "nvidia_smi": facts}


def report(read=None, outcomes=None, check_mode=False, **params):
    read = guest() if read is None else read
    outcomes = {"nvcc": NVCC_116, "cuda_program": PROGRAM_PASS, "nvenc": NVENC_REFUSED,
                "pytorch": TORCH_OK} if outcomes is None else outcomes
    return guest_plans.gpu_validate_report(read, outcomes, dict(PARAMS, **params), check_mode=check_mode)


def test_a_licensed_guest_passes_with_nvenc_missing_on_its_gpu_as_a_warning():
    result = report()
    checks = result["checks"]
    assert list(checks) == ["driver", "license", "profile", "nvcc", "cuda_program", "nvenc", "pytorch", "nccl",
                            "dcgm"]
    assert result["passed"] and result["failed"] == [] and result["warnings"] == ["nvenc"]
    assert checks["driver"]["message"] == "driver 510.47.03 (CUDA 11.6), GRID A100-4C"
    assert checks["license"]["message"] == "NVIDIA Virtual Compute Server, expires 2022-05-27T00:08:28Z"
    assert checks["profile"] == {"status": "ok", "message": "the guest sees grid_a100-4c",
                                 "expected": "grid_a100-4c", "seen": ["grid_a100-4c"]}
    assert checks["nvcc"]["message"] == "nvcc 11.6.124 (CUDA 11.6)" and checks["nvcc"]["driver_check"]["status"] == "ok"
    assert checks["cuda_program"]["output"] == ["Device 0: GRID A100-4C", "PASS"]
    assert checks["nvenc"]["category"] == "not_available"
    assert checks["nvenc"]["errors"][-1] == "Error initializing output stream 0:0 -- Error while opening encoder " \
                                            "for output stream #0:0"
    assert checks["pytorch"]["message"] == "torch 1.12.0 (CUDA 11.6) sees GRID A100-4C"
    assert checks["nccl"]["status"] == "skipped" and checks["dcgm"]["status"] == "skipped"


def test_an_unlicensed_guest_fails_the_license_check_with_nvidia_smis_words():
    result = report(guest(UNLICENSED))
    assert result["failed"] == ["license"]
    assert result["checks"]["license"]["message"] == "not licensed: GRID A100-4C Unlicensed (Unrestricted)"
    assert result["checks"]["license"]["gpus"][0]["licensed"] is False


def test_without_a_driver_the_checks_that_need_it_are_skipped_and_say_why():
    read = {"gathered": ["nvidia_smi"], "nvidia_smi": {"present": False, "gpus": [], "kind": "missing", "msg": "m"},
            "errors": {"nvidia_smi": {"kind": "missing", "msg": "nvidia-smi: command not found"}}}
    nvcc = {"rc": 2, "msg": "[Errno 2] No such file or directory: b'/usr/local/cuda/bin/nvcc'", "stdout": "",
            "stderr": ""}
    result = report(read, {"nvcc": nvcc}, nvenc=False, pytorch_python="")
    checks = result["checks"]
    assert result["failed"] == ["driver", "nvcc"]
    assert checks["driver"]["message"] == "nvidia-smi fails (missing): nvidia-smi: command not found"
    assert checks["license"]["message"] == checks["profile"]["message"] == "no working driver"
    assert checks["nvcc"]["message"] == ("/usr/local/cuda/bin/nvcc does not run: [Errno 2] No such file or "
                                         "directory: b'/usr/local/cuda/bin/nvcc'")
    assert checks["cuda_program"] == {"status": "skipped", "message": "no working driver and nvcc", "output": []}


def test_a_guest_that_sees_another_vgpu_type_fails_the_profile_check():
    check = report(vgpu_profile="grid_a100-8c")["checks"]["profile"]
    assert check["status"] == "failed"
    assert check["message"] == "the guest sees grid_a100-4c, the inventory says grid_a100-8c"


def test_nvcc_of_another_release_or_one_the_driver_cannot_run():
    assert report(cuda_version="11.8")["checks"]["nvcc"]["message"] == "nvcc 11.6.124, expected CUDA 11.8"
    newer = dict(NVCC_116, stdout="Cuda compilation tools, release 11.8, V11.8.89\n")
    check = report(outcomes={"nvcc": newer})["checks"]["nvcc"]
    assert check["status"] == "warning" and "minor-version compatibility" in check["message"]
    newest = dict(NVCC_116, stdout="Cuda compilation tools, release 12.4, V12.4.131\n")
    check = report(outcomes={"nvcc": newest})["checks"]["nvcc"]
    assert check["status"] == "failed" and check["driver_check"]["status"] == "unsupported"


@pytest.mark.parametrize("program, status, message", [
    ({"rc": 1, "stdout": "", "stderr": "nvcc fatal   : Unsupported gpu architecture 'compute_10'\n"}, "failed",
     "nvcc failed: nvcc fatal   : Unsupported gpu architecture 'compute_10'"),
    ({"rc": 1, "stdout": MARKER + "\nCUDA error: no CUDA-capable device is detected\n", "stderr": ""}, "failed",
     "the program failed (rc 1): CUDA error: no CUDA-capable device is detected"),
    ({"rc": 0, "stdout": MARKER + "\nFAIL at 17\n", "stderr": ""}, "failed", "the program failed (rc 0): FAIL at 17"),
])
def test_the_test_program_passes_only_when_compiled_run_and_printing_pass(program, status, message):
    check = report(outcomes={"nvcc": NVCC_116, "cuda_program": program})["checks"]["cuda_program"]
    assert (check["status"], check["message"]) == (status, message)


def test_check_mode_does_not_judge_the_test_program():
    assert report(check_mode=True)["checks"]["cuda_program"]["status"] == "skipped"


def test_in_check_mode_a_check_resting_on_a_pending_change_is_not_judged():
    """The toolkit is only to be linked and the guest to be licensed by roles earlier in the check run: nvcc's and
    the license's failures are not verdicts; with nothing pending, or in a real run, they are."""
    missing = {"rc": 127, "stdout": "", "stderr": "/usr/local/cuda/bin/nvcc: No such file or directory"}
    read, outcomes = guest(UNLICENSED), {"nvcc": missing, "nvenc": NVENC_REFUSED, "pytorch": TORCH_OK}
    pending = report(read, outcomes, check_mode=True, pending=["cuda_toolkit", "grid_license"])
    assert pending["passed"] and pending["failed"] == []
    for name, role in (("nvcc", "cuda_toolkit"), ("license", "grid_license")):
        assert pending["checks"][name]["status"] == "skipped", name
        assert pending["checks"][name]["message"].startswith(
            "not judged in check mode: %s would change the guest first (" % role), pending["checks"][name]
    assert report(read, outcomes, check_mode=True, pending=["cudnn"])["failed"] == ["license", "nvcc"]
    assert report(read, outcomes, check_mode=True)["failed"] == ["license", "nvcc"]
    assert report(read, outcomes, pending=["cuda_toolkit", "grid_license"])["failed"] == ["license", "nvcc"]


@pytest.mark.parametrize("ffmpeg, required, category, status", [
    ({"rc": 0, "stdout": "", "stderr": "frame=   60 fps=0.0 q=9.0 Lsize=N/A time=00:00:02.00\n"}, False, "ok", "ok"),
    ({"rc": 1, "stdout": "", "stderr": "Unknown encoder 'h264_nvenc'\n"}, False, "no_encoder", "failed"),
    ({"rc": 1, "stdout": "", "stderr": "[h264_nvenc @ 0x5] Cannot load libnvidia-encode.so.1\n"}, False, "driver",
     "failed"),
    ({"rc": 2, "stdout": "", "stderr": "", "msg": "[Errno 2] No such file or directory: b'ffmpeg'"}, False,
     "no_ffmpeg", "warning"),
    ({"rc": 2, "stdout": "", "stderr": "", "msg": "[Errno 2] No such file or directory: b'ffmpeg'"}, True,
     "no_ffmpeg", "failed"),
    (NVENC_REFUSED, True, "not_available", "failed"),
    ({"rc": 1, "stdout": "", "stderr": "Segmentation fault\n"}, False, "unknown", "failed"),
])
def test_an_nvenc_failure_is_told_apart_by_what_ffmpeg_printed(ffmpeg, required, category, status):
    check = report(outcomes={"nvenc": ffmpeg}, nvenc_required=required)["checks"]["nvenc"]
    assert (check["category"], check["status"]) == (category, status)


@pytest.mark.parametrize("torch, message", [
    ({"rc": 0, "stdout": json.dumps({"torch": "2.4.0", "cuda": None, "available": False, "devices": []})},
     "torch 2.4.0 (CUDA none): torch.cuda.is_available() is False"),
    ({"rc": 1, "stdout": "", "stderr": "Traceback (most recent call last):\nModuleNotFoundError: No module named "
                                       "'torch'\n"},
     "/usr/bin/python3 cannot import torch: ModuleNotFoundError: No module named 'torch'"),
    ({"rc": 0, "stdout": "Warning: something\n", "stderr": ""},
     "/usr/bin/python3 answered what is not JSON: Warning: something"),
])
def test_pytorch_fails_with_what_it_answered(torch, message):
    check = report(outcomes={"pytorch": torch})["checks"]["pytorch"]
    assert (check["status"], check["message"]) == ("failed", message)


def test_checks_judged_elsewhere_are_reported_in_their_place():
    passthrough = {"gpus": {"status": "failed", "message": "2 GPUs, 4 expected"}}
    nccl = {"status": "ok", "message": "all_reduce_perf: 180 GB/s"}
    dcgm = {"status": "failed", "message": "DCGM 4.2.3 level 2: GPU 1 failed memory: ..."}
    params = dict(PARAMS, cuda_program=False, nvenc=False, pytorch_python="")
    result = guest_plans.gpu_validate_report(guest(), {"nvcc": NVCC_116}, params, passthrough=passthrough, nccl=nccl,
                                             dcgm=dcgm)
    assert list(result["checks"])[:3] == ["driver", "gpus", "license"] and result["checks"]["nccl"] == nccl
    assert list(result["checks"])[-1] == "dcgm" and result["checks"]["dcgm"] == dcgm
    assert not result["passed"] and result["failed"] == ["gpus", "dcgm"]


def test_a_vgpu_profile_that_is_no_profile_name_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="gpu_validate_report"):
        report(vgpu_profile="not-a-profile")
