# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.vgpu.gpu_guest_info: with ``reuse``, one read of a guest serves every later read in
the same ansible-playbook run while the guest is as it was read (the guest roles' reads, then the doctor's).

The state read is kept in the host fact ``gpu_guest_info_cache`` with what it was read under (the run, the
nvidia-smi options, the host variable ``gpu_guest_info_changes``) and a fingerprint of the guest taken just before
the read. A later read with ``reuse`` first takes the fingerprint again, in one shell command over the open
connection (no module is sent); where it differs, whatever changed the guest, the guest is read again. A read
under the same key and fingerprint that asks for nothing more than was read is answered from the kept state; one
that asks for more reads only what is missing and adds it to the kept state. Otherwise (the first read, or the
guest changed) the guest is read with every probe, the files and services read before, and those that the play
names in ``gpu_guest_info_reads`` for its later reads, so that those find them.

Why a fingerprint on the guest rather than a count of changes: a count moved by the roles goes stale as soon as a
task forgets to move it, and the controller has no place where an action plugin sees the other tasks' results
(each task runs in a worker forked for it; only callbacks, which must be enabled in ansible.cfg, and the strategy
see them). The fingerprint sees every change, whoever made it and whether or not it said ``changed``, for one
round trip that costs a fraction of a module run. It holds what the probes read that a change leaves a trace in:
``stat`` (inode, size, mode, owner, nanosecond modification and change times; of the path and of what it points
to) of the files and services' unit files asked for and of the fixed places the probes read (package databases,
modprobe.d, gridd.conf and the tokens, the toolkits under /usr/local, the loader and profile scripts, the
directories searched for nvidia-smi, nvcc and nvidia-ctk, the kernel's modules), the boot id, the NVIDIA and
nouveau lines of /proc/modules, and systemd's LoadState, ActiveState, UnitFileState, FragmentPath, the time it last
became active and NeedDaemonReload of the services asked for (nvidia-gridd's InvocationID too: a restart changes what
nvidia-smi says of the license). What changes on its own without any of those, nvidia-smi's live answers and the
clock's synchronisation, is as fresh as the read; so is the state of a oneshot service that does not remain after it
exits (a collector its timer starts every 30 seconds is ``activating`` while it runs, then ``inactive`` or
``failed``): its unit is still covered, its runs are not. Where the kept read caught nvidia-smi's answer on its way
(nvidia-gridd still to license a GPU, a fabric waiting for Fabric Manager: both settle on their own, and a role waits
for them), a later read asking for it reads nvidia-smi and the license again. ``gpu_guest_info_changes`` is still
honoured: moving it makes the next read go to the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import re
from shlex import quote as shlex_quote

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._license import acquiring
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._probe_names import ALL_PROBES, ON_REQUEST, PROBES
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._fabric import waiting

MODULE = "gpuops.vgpu.gpu_guest_info"
CACHE_FACT = "gpu_guest_info_cache"
CHANGES_VAR = "gpu_guest_info_changes"
# What the play's later reads ask for: a list of {files: [...], services: [...]}, one per role (playbooks/guests.yml).
READS_VAR = "gpu_guest_info_reads"

# The places the probes read whatever files and services are asked for (see the module's probes);
# tests/unit/plugins/action/test_gpu_guest_info_coverage.py fails a probe that reads a place outside them.
BASE_PATHS = (
    "/etc/os-release", "/usr/lib/os-release", "/var/lib/dpkg/status", "/var/lib/rpm", "/var/lib/rpm/rpmdb.sqlite",
    "/var/lib/rpm/Packages", "/usr/lib/sysimage/rpm", "/usr/lib/sysimage/rpm/rpmdb.sqlite",
    "/var/log/nvidia-installer.log", "/usr/bin/nvidia-uninstall", "/etc/modprobe.d", "/run/modprobe.d",
    "/lib/modprobe.d", "/usr/lib/modprobe.d", "/etc/modprobe.d/*", "/run/modprobe.d/*", "/lib/modprobe.d/*",
    "/usr/lib/modprobe.d/*", "/sys/module/nvidia", "/sys/module/nouveau", "/etc/nvidia", "/etc/nvidia/gridd.conf",
    "/etc/nvidia/gridd.conf.template", "/etc/nvidia/ClientConfigToken", "/etc/nvidia/ClientConfigToken/*", "/usr/local",
    "/usr/local/cuda*", "/usr/local/cuda*/version.json", "/usr/local/cuda*/version.txt", "/usr/local/cuda*/bin",
    "/usr/local/cuda*/include", "/usr/local/cuda*/include/cudnn_version*.h", "/usr/include/cudnn_version*.h",
    "/usr/include/x86_64-linux-gnu/cudnn_version*.h", "/etc/environment", "/etc/profile.d", "/etc/profile.d/*",
    "/etc/ld.so.conf.d", "/etc/ld.so.conf.d/*", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/bin",
    "/sbin", "/opt/nvidia/bin", "/usr/local/nvidia/bin", "/etc/systemd/system", "/lib/systemd/system",
    "/usr/lib/systemd/system", "/run/systemd/system",
)
# inode, size, mode, owner, group, modification and change times (to the nanosecond), type.
STAT_FORMAT = "%i %s %a %u %g %y %z %F"
_STAT_LINE = re.compile(r"^([LF])\|(.*?)\|")
_STAT_ERROR = re.compile(r"'(.*)'")


class ActionModule(ActionBase):
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        if not boolean(args.pop("reuse", False), strict=False):
            result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
            return result

        key = self._cache_key(args, task_vars)
        cached = task_vars.get(CACHE_FACT) or {}
        later = list(self._templar.template(task_vars.get(READS_VAR) or []))
        files, services = covered(args, cached.get("state"), later)
        now = self._fingerprint(files, services, args.get("nvidia_smi_path"))
        cached_state = cached.get("state") if cached.get("key") == key and unchanged(cached, now) else None
        if cached_state is None and cached.get("state"):
            later.append(cached["state"])
        cached_state = settled(cached_state)
        module_args, merge = read_plan(args, cached_state, later)
        if module_args is None:
            result.update(changed=False, gpu_guest=cached_state, reused=True)
            return result

        answer = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        result.update(answer)
        if not answer.get("failed"):
            state = merged(cached_state, answer["gpu_guest"]) if merge else answer["gpu_guest"]
            facts = dict(answer.get("ansible_facts") or {})
            facts[CACHE_FACT] = {"key": key, "state": state, "fingerprint": now}
            result.update(ansible_facts=facts, gpu_guest=state, reused=False)
        return result

    def _cache_key(self, args, task_vars):
        return {
            "run": _run_id(self._task),
            "changes": int(task_vars.get(CHANGES_VAR) or 0),
            "query_format": args.get("query_format") or "xml",
            "nvidia_smi_path": args.get("nvidia_smi_path"),
        }

    def _fingerprint(self, files, services, nvidia_smi_path):
        """The guest's fingerprint over ``files`` and ``services`` (see the module docstring), from one shell
        command; None where it cannot be taken."""
        answer = self._low_level_execute_command(fingerprint_command(files, services, nvidia_smi_path), sudoable=True)
        if answer.get("rc") != 0:
            return None
        return parse_fingerprint(answer.get("stdout", ""), files, services)


def covered(args, state, later_reads):
    """The files and services a fingerprint taken now covers: those asked for, those of ``state`` (the kept read)
    and those of ``later_reads``, sorted."""
    files = set(args.get("files") or [])
    services = set(args.get("services") or [])
    for read in list(later_reads) + ([state] if state else []):
        files.update(read.get("files") or [])
        services.update(read.get("services") or [])
    return sorted(files), sorted(services)


def _unit(name):
    return name if "." in name else name + ".service"


def fingerprint_command(files, services, nvidia_smi_path=None):
    """One POSIX shell command printing the guest's fingerprint: sections of the fixed places (``@base``), of
    ``files`` and of ``services``, and ``@end``."""
    quoted = " ".join(shlex_quote(path) for path in files)
    units = " ".join(shlex_quote(_unit(name)) for name in services)
    stat = ("stat -c 'F|%%n|%s' -- \"$@\" 2>&1; stat -L -c 'L|%%n|%s' -- \"$@\" 2>&1" % (STAT_FORMAT, STAT_FORMAT))
    paths = " ".join(BASE_PATHS + ((shlex_quote(nvidia_smi_path),) if nvidia_smi_path else ()))
    return " ".join([
        "LC_ALL=C; export LC_ALL; echo @base; k=$(uname -r);",
        "set --; for p in %s \"/lib/modules/$k\" \"/lib/modules/$k/modules.dep\";" % paths,
        "do [ -e \"$p\" ] || [ -h \"$p\" ] && set -- \"$@\" \"$p\"; done; %s;" % stat,
        "cat /proc/sys/kernel/random/boot_id 2>&1; grep -E '^(nvidia|nouveau)' /proc/modules 2>&1;",
        "systemctl show --property=InvocationID,ActiveState,UnitFileState nvidia-gridd.service 2>&1;",
        "echo @files; set --; for p in %s; do if [ -e \"$p\" ] || [ -h \"$p\" ]; then set -- \"$@\" \"$p\";" % quoted,
        "else echo \"F|$p|absent\"; fi; done; [ $# -eq 0 ] || { %s; };" % stat,
        "echo @services;",
        ("systemctl show --property=LoadState,ActiveState,UnitFileState,FragmentPath,ActiveEnterTimestampMonotonic,"
         "NeedDaemonReload,Type,RemainAfterExit -- %s 2>&1;" % units
         if services else ""),
        "echo @end",
    ])


def parse_fingerprint(output, files, services):
    """``{"base": digest, "file:PATH": digest, "service:UNIT": digest}`` from ``fingerprint_command``'s output, or
    None where it is cut short or ``stat`` did not answer (then nothing is reused)."""
    sections = {}
    name = None
    for line in output.splitlines():
        if line in ("@base", "@files", "@services", "@end"):
            name = line[1:]
            sections[name] = []
        elif name is not None:
            sections[name].append(line)
    if "end" not in sections or not any(_STAT_LINE.match(line) for line in sections["base"]):
        return None
    print_ = {"base": _digest(sections["base"])}
    per_file = dict((path, []) for path in files)
    for line in sections["files"]:
        match = _STAT_LINE.match(line) or _STAT_ERROR.search(line)
        path = match.group(match.lastindex) if match else None
        for target in ([path] if path in per_file else per_file):
            per_file[target].append(line)
    for path, lines in per_file.items():
        print_["file:" + path] = _digest(lines)
    blocks = [_unit_lines(block) for block in "\n".join(sections["services"]).strip().split("\n\n")]
    for index, service in enumerate(services):
        lines = blocks[index] if len(blocks) == len(services) else sum(blocks, [])
        print_["service:" + service] = _digest(lines)
    return print_


# What a oneshot service's runs change (see the module docstring).
_RUN_PROPERTIES = ("ActiveState=", "ActiveEnterTimestampMonotonic=")


def _unit_lines(block):
    """The lines of one unit's ``systemctl show`` block that its fingerprint holds."""
    lines = block.splitlines()
    if "Type=oneshot" in lines and "RemainAfterExit=no" in lines:
        return [line for line in lines if not line.startswith(_RUN_PROPERTIES)]
    return lines


def unchanged(cached, now):
    """Whether the guest is as ``cached`` (the kept read) found it: its fingerprint was taken and every part of it
    is the same in ``now``."""
    before = cached.get("fingerprint")
    if not before or not now:
        return False
    return all(now.get(part) == digest for part, digest in before.items())


def _digest(lines):
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def settled(state):
    """``state`` (a kept read, or None) without what was on its way when it was read: nvidia-smi's answer and the
    license while nvidia-gridd was still to license a GPU, nvidia-smi's while a GPU's fabric waited for Fabric
    Manager. Both daemons settle those on their own, with no trace the fingerprint sees, and a role waits for them
    (grid_license, fabric_manager): a later read asking for them reads them again."""
    if not state or "nvidia_smi" not in (state.get("gathered") or []):
        return state
    gpus = (state.get("nvidia_smi") or {}).get("gpus") or []
    license_facts = state.get("license") if "license" in state["gathered"] else None
    stale = ("nvidia_smi", "license") if acquiring(license_facts, gpus) else ("nvidia_smi",) if waiting(gpus) else ()
    if not stale:
        return state
    kept = dict((name, value) for name, value in state.items() if name not in stale)
    kept["gathered"] = [name for name in state["gathered"] if name not in stale]
    return kept


def read_plan(args, cached_state, later_reads):
    """``(module_args, merge)`` for a read with ``reuse``: None when ``cached_state`` (the state kept under the
    same key, or None) answers it; the missing probes, files and services only, to be merged into it, when it
    answers part of it; else a whole read (every probe) of what is asked and of the files and services of
    ``later_reads`` (what the play's later reads ask for, and what an outdated read held)."""
    wanted = set(PROBES if args.get("gather") is None else args["gather"])
    files = set(args.get("files") or [])
    services = set(args.get("services") or [])
    if cached_state is not None:
        missing_probes = wanted - set(cached_state.get("gathered", []))
        missing_files = files - set(cached_state.get("files") or {})
        missing_services = services - set(cached_state.get("services") or {})
        if not (missing_probes or missing_files or missing_services):
            return None, False
        return dict(args, gather=[name for name in ALL_PROBES if name in missing_probes],
                    files=sorted(missing_files), services=sorted(missing_services)), True
    for read in later_reads:
        files.update(read.get("files") or [])
        services.update(read.get("services") or [])
    module_args = dict(args, files=sorted(files), services=sorted(services))
    module_args.pop("gather", None)
    # Every probe, and those read only on request where this read asks for them.
    if wanted & set(ON_REQUEST):
        module_args["gather"] = list(PROBES) + [name for name in ON_REQUEST if name in wanted]
    return module_args, False


def merged(state, addition):
    """``state`` with the probes, files, services and errors of ``addition`` (a read of what it lacked)."""
    result = dict(state)
    for name in addition.get("gathered", []):
        result[name] = addition[name]
    result["gathered"] = [name for name in ALL_PROBES if name in set(state.get("gathered", []))
                          | set(addition.get("gathered", []))]
    for part in ("files", "services", "errors"):
        if addition.get(part) or part in state:
            result[part] = dict(state.get(part) or {}, **(addition.get(part) or {}))
    return result


def _run_id(task):
    """The ansible-playbook run the task belongs to: its process (the parent of the worker each task runs in) and
    when that started, so that a read kept from an earlier run (through a fact cache, or a reused process id) is
    never reused. Where the process cannot be told (no /proc), the play."""
    parent = os.getppid()
    try:
        with open("/proc/%d/stat" % parent) as handle:
            return "%d-%s" % (parent, handle.read().rsplit(")", 1)[1].split()[19])
    except (IOError, OSError, IndexError):
        return _play_id(task)


def _play_id(task):
    node = task
    while node is not None:
        play = getattr(node, "_play", None)
        if play is not None:
            return play._uuid
        node = getattr(node, "_parent", None)
    return None
