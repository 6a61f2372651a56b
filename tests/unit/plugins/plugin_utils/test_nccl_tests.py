# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""all_reduce_perf (nccl-tests) output and the check against the topology, on real recorded outputs
(tests/fixtures/nccl-tests, tests/fixtures/nvidia-smi)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _nccl_tests

FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                         "fixtures"))


def read(folder, name):
    path = os.path.join(FIXTURES, folder, name)
    if not os.path.isfile(path):
        raise AssertionError("recorded output %s is missing; restore tests/fixtures from git" % path)
    with open(path) as handle:
        return handle.read()


V100 = read("nccl-tests", "all_reduce_perf_4xV100_pcie_no_nvlink_nccl2.4.2.txt")
H100 = read("nccl-tests", "all_reduce_perf_16xH100_2nodes_mpi_nccl_recent.txt")
T4_TAGGED = read("nccl-tests", "all_reduce_perf_2xT4_2nodes_efa_mpi_tag_output_nccl2.12.7.txt")
TOPO_NV12 = read("nvidia-smi", "topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt")
NVLINK_H100 = read("nvidia-smi", "nvlink_s_2xH100_pcie_inactive_links_driver555.txt")
# Not a recording: four GPUs behind one host bridge, in topo -m's layout, for the PCIe case.
TOPO_PHB = ("\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tPHB\tPHB\tPHB\t0-19\t0\nGPU1\tPHB\t X \tPHB\tPHB\t0-19\t0\n"
            "GPU2\tPHB\tPHB\t X \tPHB\t0-19\t0\nGPU3\tPHB\tPHB\tPHB\t X \t0-19\t0\n\nLegend:\n")


def test_older_layout_with_error_column():
    result = _nccl_tests.parse_all_reduce(V100)
    assert [d["name"] for d in result["devices"]] == ["Tesla V100-PCIE-32GB"] * 4
    assert result["devices"][3] == {"rank": 3, "host": "bessemer-node026", "device": 3, "bus_id": "0x40",
                                    "name": "Tesla V100-PCIE-32GB"}
    assert len(result["rows"]) == 25
    last = result["rows"][-1]
    assert (last["size"], last["count"], last["type"], last["redop"]) == (134217728, 33554432, "float", "sum")
    assert last["out_of_place"] == {"time_us": 18003.0, "algbw": 7.46, "busbw": 11.18, "wrong": 0}
    assert (result["peak_busbw_gbps"], result["avg_busbw_gbps"], result["errors"]) == (11.2, 4.42606, 0)


def test_current_layout_with_root_and_wrong_columns():
    result = _nccl_tests.parse_all_reduce(H100)
    assert len(result["devices"]) == 16 and result["devices"][8]["host"] == "ztan-mig-gq73"
    assert result["rows"][-1]["in_place"] == {"time_us": 47743.0, "algbw": 179.92, "busbw": 337.35, "wrong": 0}
    assert (result["peak_busbw_gbps"], result["avg_busbw_gbps"], result["out_of_bounds"]) == (338.82, 70.742, 0)


def test_mpirun_tag_output_of_a_multi_node_run():
    """Every line prefixed with [1,0]<stdout>: (Open MPI's --tag-output), NCCL INFO lines of both ranks in between."""
    result = _nccl_tests.parse_all_reduce(T4_TAGGED)
    assert result["devices"] == [
        {"rank": 0, "host": "test-nccl-efa-worker-0", "device": 0, "bus_id": "0x35", "name": "Tesla T4"},
        {"rank": 1, "host": "test-nccl-efa-worker-1", "device": 0, "bus_id": "0xf5", "name": "Tesla T4"}]
    assert len(result["rows"]) == 31 and result["rows"][0]["size"] == 0
    assert result["rows"][-1]["out_of_place"] == {"time_us": 344981.0, "algbw": 3.11, "busbw": 3.11, "wrong": 0}
    assert (result["peak_busbw_gbps"], result["avg_busbw_gbps"], result["out_of_bounds"], result["errors"]) == (
        3.15, 1.15327, 0, 0)


def test_wrong_elements_and_no_rows_are_reported():
    broken = H100.replace("  180.71  338.82      0", "  180.71  338.82      3")
    assert _nccl_tests.parse_all_reduce(broken)["errors"] == 3
    with pytest.raises(InputError, match="no result rows.*NCCL failure"):
        _nccl_tests.parse_all_reduce("# nThread 1 nGpus 2\nNCCL failure common.cu:1 'unhandled cuda error'\n")


def test_nvlink_pair_promises_links_times_link_speed():
    check = _nccl_tests.check_from_outputs(H100, TOPO_NV12, NVLINK_H100, "5, 16\n5, 16\n")
    assert (check["path"], check["nominal_gbps"], check["topology"]) == ("NVLink", 318.74, {"0-1": "NV12"})
    assert check["status"] == "ok", check["message"]


def test_pcie_only_run_misses_what_nvlink_promises_and_says_why():
    check = _nccl_tests.check_from_outputs(V100, TOPO_NV12, NVLINK_H100, "3, 16\n3, 16\n")
    assert check["status"] == "failed"
    assert "11.20 GB/s is below 50% of the 318.74 GB/s that NVLink promises (GPU0-GPU1: NV12)" in check["message"]


def test_pcie_topology_judged_against_the_pcie_link():
    check = _nccl_tests.check_from_outputs(V100, TOPO_PHB, "", "3, 16\n3, 16\n3, 16\n3, 16\n")
    assert (check["path"], check["nominal_gbps"], check["status"]) == ("PCIe", 15.76, "ok")
    assert "GPU0-GPU3: PHB" in check["message"]
    # Peers that should share NVLink but sit on PCIe fail, with the topology named.
    check = _nccl_tests.check_from_outputs(V100, TOPO_PHB, "", "3, 16\n", expect_nvlink=True)
    assert check["status"] == "failed" and "should be NVLink peers" in check["message"]
    # A narrower link than the GPUs could use halves the promise: gen3 x8.
    assert _nccl_tests.check_from_outputs(V100, TOPO_PHB, "", "3, 8\n")["nominal_gbps"] == 7.88


# The programs the lab's stand-in nccl-tests archive builds: this file under each program's name.
STANDIN = os.path.normpath(os.path.join(FIXTURES, "..", "..", "lab", "guests", "standins", "nccl", "perf"))


@pytest.fixture
def guest_smi(tmp_path):
    """An nvidia-smi answering from the recorded 2x H100 PCIe with an NVLink bridge (topo -m, nvlink -s)."""
    for name, text in (("topo", TOPO_NV12), ("nvlink", NVLINK_H100), ("pcie", "5, 16\n5, 16\n"),
                       ("list", "GPU 0: NVIDIA H100 PCIe (UUID: GPU-a)\nGPU 1: NVIDIA H100 PCIe (UUID: GPU-b)\n")):
        (tmp_path / name).write_text(text)
    script = tmp_path / "nvidia-smi"
    script.write_text('#!/bin/sh\ncd "%s"\ncase "$1" in topo) cat topo;; nvlink) cat nvlink;; -L) cat list;; '
                      '--query-gpu=*) cat pcie;; *) exit 2;; esac\n' % tmp_path)
    script.chmod(0o755)
    # NCCL's runtime library, which the programs are linked against.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libnccl.so.2").write_text("")
    return dict(os.environ, PATH="%s:%s" % (tmp_path, os.environ["PATH"]), LD_LIBRARY_PATH=str(tmp_path / "lib"))


def run_standin(env, *args, **kwargs):
    import subprocess
    import sys
    program = os.path.join(os.path.dirname(env["LD_LIBRARY_PATH"]), kwargs.get("name", "all_reduce_perf"))
    if not os.path.exists(program):
        os.symlink(STANDIN, program)
    return subprocess.run([sys.executable, program] + list(args), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)


def test_lab_standin_prints_what_the_parser_reads_with_numbers_from_the_topology(guest_smi):
    run = run_standin(guest_smi, "-b", "8M", "-e", "128M", "-f", "2", "-g", "2")
    assert run.returncode == 0, run.stdout
    parsed = _nccl_tests.parse_all_reduce(run.stdout)
    assert [row["size"] for row in parsed["rows"]] == [8 * 2 ** 20 * 2 ** n for n in range(5)]
    assert [d["name"] for d in parsed["devices"]] == ["NVIDIA H100 PCIe"] * 2
    check = _nccl_tests.check_from_outputs(run.stdout, TOPO_NV12, NVLINK_H100, "5, 16\n5, 16\n")
    assert check["status"] == "ok" and check["path"] == "NVLink", check["message"]
    assert 0.5 * 318.74 < check["peak_busbw_gbps"] <= 0.8 * 318.74

    degraded = run_standin(dict(guest_smi, GPUS_DEGRADED="0.2"), "-b", "8M", "-e", "128M", "-f", "2", "-g", "2")
    check = _nccl_tests.check_from_outputs(degraded.stdout, TOPO_NV12, NVLINK_H100, "5, 16\n5, 16\n")
    assert check["status"] == "failed" and "GPU0-GPU1: NV12" in check["message"]

    too_many = run_standin(guest_smi, "-g", "4")
    assert too_many.returncode != 0 and "invalid device ordinal" in too_many.stdout
    with pytest.raises(InputError):
        _nccl_tests.parse_all_reduce(too_many.stdout)


def test_lab_standin_programs_follow_their_collective_and_need_nccl(guest_smi):
    reduce = _nccl_tests.parse_all_reduce(run_standin(guest_smi, "-b", "128M", "-e", "128M", "-g", "2").stdout)
    gather = run_standin(guest_smi, "-b", "128M", "-e", "128M", "-g", "2", name="all_gather_perf")
    assert gather.returncode == 0 and "float    none      -1" in gather.stdout, gather.stdout
    row = _nccl_tests.parse_all_reduce(gather.stdout)["rows"][0]["out_of_place"]
    broadcast = run_standin(guest_smi, "-b", "128M", "-e", "128M", "-g", "2", name="broadcast_perf")
    assert broadcast.returncode == 0 and "float    none       0" in broadcast.stdout, broadcast.stdout
    # nccl-tests' bus bandwidth: algbw * 2(n-1)/n for all-reduce (1 on two GPUs), (n-1)/n for all-gather.
    first = reduce["rows"][0]["out_of_place"]
    assert first["busbw"] == pytest.approx(first["algbw"], abs=0.02)
    assert row["busbw"] == pytest.approx(row["algbw"] / 2, abs=0.02)

    os.remove(os.path.join(guest_smi["LD_LIBRARY_PATH"], "libnccl.so.2"))
    missing = run_standin(dict(guest_smi, LD_LIBRARY_PATH=guest_smi["LD_LIBRARY_PATH"]), "-g", "2")
    assert missing.returncode == 127 and "libnccl.so.2: cannot open shared object file" in missing.stdout
