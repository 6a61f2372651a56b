# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that bridge the doctor role and its logic in ``plugin_utils/_doctor_facts.py`` and ``_doctor.py``, and
give other roles the doctor's rules (``hosts_alike``).

Each filter is documented in the YAML file of its name next to this one (``ansible-doc -t filter <name>``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_doctor = lazy_module("plugin_utils._doctor")
_doctor_cluster = lazy_module("plugin_utils._doctor_cluster")
_doctor_facts = lazy_module("plugin_utils._doctor_facts")


FINDING_KEYS = ("layer", "object", "check", "status", "message")
# What the doctor's gather entry point reads on a host or guest (roles/doctor/tasks/gather.yml).
GATHERED_KINDS = ("host_nvidia_smi", "bmc_info", "guest_nvidia_smi", "guest_cuda", "server")


def _mapping(value, name, what):
    if not isinstance(value, dict):
        raise AnsibleFilterError("%s: expects %s (a dict), got %s." % (name, what, type(value).__name__))
    return value


def _findings(value, name):
    if not isinstance(value, list) or not all(isinstance(f, dict) and all(k in f for k in FINDING_KEYS)
                                              for f in value):
        raise AnsibleFilterError("%s: expects the findings list of gpuops.vgpu.doctor_checks (dicts with %s)."
                                 % (name, ", ".join(FINDING_KEYS)))
    bad = sorted(set(f["status"] for f in value) - set(_doctor.STATUSES))
    if bad:
        raise AnsibleFilterError("%s: unknown status %s; a finding is one of %s." % (
            name, ", ".join(bad), ", ".join(_doctor.STATUSES)))
    return value


def _options(options, name):
    unknown = sorted(set(options) - set(_doctor.DEFAULTS))
    if unknown:
        raise AnsibleFilterError("%s: unknown option(s) %s; known: %s." % (
            name, ", ".join(unknown), ", ".join(sorted(_doctor.DEFAULTS))))
    return options


def doctor_facts(raw, **options):
    """``raw | gpuops.vgpu.doctor_facts``: compact facts from the doctor role's registered results."""
    raw = _mapping(raw, "doctor_facts", "the registered results")
    return _doctor_facts.collect(raw, _options(options, "doctor_facts"))


def doctor_checks(facts, **options):
    """``facts | gpuops.vgpu.doctor_checks(...)``: the findings list."""
    facts = _mapping(facts, "doctor_checks", "the output of gpuops.vgpu.doctor_facts")
    if "hosts" not in facts:
        raise AnsibleFilterError("doctor_checks: expects the output of gpuops.vgpu.doctor_facts (it has no hosts).")
    try:
        return _doctor.run_checks(facts, _options(options, "doctor_checks"))
    except ValueError as err:
        raise AnsibleFilterError("doctor_checks: %s" % err)


def doctor_outcome(raw, **options):
    """``raw | gpuops.vgpu.doctor_outcome(...)``: facts, findings, summary and table in one pass."""
    facts = doctor_facts(raw, **dict((key, value) for key, value in options.items() if key in _doctor_facts.COMPONENTS))
    findings = doctor_checks(facts, **options)
    return {"facts": facts, "findings": findings, "summary": _doctor.summarize(findings),
            "table": _doctor.table(findings)}


def doctor_summary(findings):
    """``findings | gpuops.vgpu.doctor_summary``: counts per status, total and the worst status."""
    return _doctor.summarize(_findings(findings, "doctor_summary"))


def doctor_table(findings):
    """``findings | gpuops.vgpu.doctor_table``: fixed-width lines grouped by layer, with remediations."""
    return _doctor.table(_findings(findings, "doctor_table"))


def hosts_alike(gpu_inventory, nvidia_smi=None):
    """``gpu_info_result | gpuops.vgpu.hosts_alike(nvidia_smi)``: GPUs and ECC alike across the hosts."""
    hosts = gpu_inventory.get("hosts") if isinstance(gpu_inventory, dict) else gpu_inventory
    if not isinstance(hosts, list):
        raise AnsibleFilterError("hosts_alike: expects a gpuops.vgpu.gpu_info result or its hosts list.")
    return _doctor_cluster.hosts_alike(hosts, _mapping(nvidia_smi or {}, "hosts_alike", "host names to nvidia_smi results"))


def doctor_gathered(hostvars, names, kind):
    """``hostvars | gpuops.vgpu.doctor_gathered(names, kind)``: the reads of ``kind`` that the hosts ``names`` made on
    themselves (the doctor role's ``gather`` entry point registers each as ``doctor_gathered_<kind>``), each with its
    host as ``item`` like a loop's results. A guest's CUDA version comes with its nvidia-smi read unless the toolkit
    had to be read as a file."""
    if kind not in GATHERED_KINDS:
        raise AnsibleFilterError("doctor_gathered: unknown kind %r; known: %s." % (kind, ", ".join(GATHERED_KINDS)))
    found = []
    for name in names or []:
        if name not in hostvars:
            continue
        own = hostvars[name]
        read = own.get("doctor_gathered_" + kind)
        if kind == "guest_cuda" and not _made(read):
            read = own.get("doctor_gathered_guest_nvidia_smi")
        if _made(read):
            found.append(dict(read, item=name))
    return found


def _made(read):
    return isinstance(read, Mapping) and not read.get("skipped")


def doctor_cuda_as_file(home):
    """``doctor_guest_cuda_home | gpuops.vgpu.doctor_cuda_as_file``: whether the CUDA version at ``home`` must be read
    from its ``version.json`` as a file, because ``gpu_guest_info``'s toolkit read does not cover ``home``."""
    return not _doctor_facts.read_by_guest_info(home)


class FilterModule(object):
    """The doctor's filters."""

    def filters(self):
        return {
            "doctor_facts": doctor_facts,
            "doctor_checks": doctor_checks,
            "doctor_outcome": doctor_outcome,
            "doctor_summary": doctor_summary,
            "doctor_table": doctor_table,
            "hosts_alike": hosts_alike,
            "doctor_gathered": doctor_gathered,
            "doctor_cuda_as_file": doctor_cuda_as_file,
        }
