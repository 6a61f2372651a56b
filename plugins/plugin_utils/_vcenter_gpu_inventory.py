# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``vcenter_gpu`` inventory plugin's rules: its options checked before any connection, and the GPU fleet that
``_vcenter_fleet.py`` reads turned into the inventory model's groups and variables.

Pure functions over plain data; a bad option raises ``InputError`` naming the option and what to write instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils._pci import pci_bus_address

POWER_STATES = ("poweredOn", "poweredOff", "suspended")
TAGS_MATCH = ("any", "all")
VCENTER_GROUP, HOSTS_GROUP, VGPU_GROUP, PASSTHROUGH_GROUP = "vcenter", "esxi_hosts", "gpu_guests", "passthrough_guests"
SERVERS_GROUP, ALL_GROUP = "servers", "all"


def _names(options, key):
    value = options.get(key) or []
    if not isinstance(value, list) or not all(isinstance(name, str) and name.strip() for name in value):
        raise InputError("%s must be a list of names, got %r." % (key, value),
                         hint="Write it as a YAML list, e.g. %s: [gpu-cluster]." % key)
    return [name.strip() for name in value]


def check_options(options):
    """The plugin's options, checked and normalized; an ``InputError`` names the first bad one and its fix."""
    for key, source in (("hostname", "VMWARE_HOST"), ("username", "VMWARE_USER")):
        if not options.get(key):
            raise InputError("%s is not set." % key, hint="Set %s in the inventory file or the environment variable "
                                                          "%s." % (key, source))
    if options.get("password") and options.get("password_file"):
        raise InputError("password and password_file are both set.", hint="Keep one of them.")
    if not options.get("password") and not options.get("password_file"):
        raise InputError("password is not set.", hint="Set password (vault-encrypted) or password_file in the "
                                                      "inventory file, or VMWARE_PASSWORD in the environment.")
    port = options.get("port")
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise InputError("port must be a TCP port (1-65535), got %r." % (port,),
                         hint="Set port to vCenter's HTTPS port, 443 unless it was changed.")
    states = _names(options, "power_states")
    unknown = [state for state in states if state not in POWER_STATES]
    if unknown:
        raise InputError("power_states has %s, which vSphere does not know." % ", ".join(unknown),
                         hint="Choose among %s." % ", ".join(POWER_STATES))
    folders = []
    for folder in _names(options, "folders"):
        path = "/" + folder.strip("/")
        if path.count("/") < 2:
            raise InputError("folders has '%s', which is not a VM folder's path." % folder,
                             hint="Write the path from the datacenter, e.g. /dc1/vm/ml (/dc1/vm for all its VMs).")
        folders.append(path)
    match = options.get("tags_match") or "any"
    if match not in TAGS_MATCH:
        raise InputError("tags_match is %r." % (match,), hint="Choose any (one of the tags) or all (every tag).")
    checked = dict(options, clusters=_names(options, "clusters"), power_states=states, folders=folders,
                   nvlink_sets=_nvlink_sets(options.get("nvlink_sets")), tags=_tag_filter(options, "tags"),
                   host_tags=_tag_filter(options, "host_tags"), tags_match=match,
                   gather_tags=bool(options.get("gather_tags")))
    return checked


def _tag_filter(options, key):
    """A tag filter's entries as ``(category, tag)``; ``category`` is None for a bare tag name (any category)."""
    entries = []
    for entry in _names(options, key):
        category, sep, tag = entry.partition(":")
        if sep and (not category.strip() or not tag.strip()):
            raise InputError("%s has '%s', which is not category:tag." % (key, entry),
                             hint="Write each entry as category:tag (gpu-tier:gold), or a tag name alone for that "
                                  "tag in any category.")
        entries.append((category.strip(), tag.strip()) if sep else (None, entry))
    return entries


def needs_tags(options):
    """Whether the run reads vSphere tags: a tag filter, or ``gather_tags``."""
    return bool(options["tags"] or options["host_tags"] or options["gather_tags"])


def tags_match(tags, wanted, match):
    """Whether an object's tags (``["category:tag", ...]``) pass a tag filter (``[(category or None, tag)]``): one
    entry (``any``) or every entry (``all``). An empty filter passes everything."""
    if not wanted:
        return True
    held = [tag.partition(":")[::2] for tag in tags]
    hits = [any(name == tag and category in (None, held_category) for held_category, name in held)
            for category, tag in wanted]
    return all(hits) if match == "all" else any(hits)


def _nvlink_sets(value):
    """``{host: [[pci id, ...], ...]}`` with the PCI ids in vSphere's spelling."""
    if value in (None, {}):
        return {}
    hint = "Write it as {esxi host name: [[pci id, pci id], ...]}, e.g. {esx-31: [['0000:3b:00.0', '0000:5e:00.0']]}."
    if not isinstance(value, dict):
        raise InputError("nvlink_sets must be a mapping of ESXi hosts to their NVLink sets, got %r." % (value,),
                         hint=hint)
    sets = {}
    for host, groups in value.items():
        if not isinstance(groups, list) or not all(isinstance(group, list) and group for group in groups):
            raise InputError("nvlink_sets of %s must be a list of lists of PCI ids, got %r." % (host, groups),
                             hint=hint)
        try:
            sets[host] = [sorted(pci_bus_address(pci_id) for pci_id in group) for group in groups]
        except InputError as err:
            raise InputError("nvlink_sets of %s: %s" % (host, err.message), hint=err.hint)
    return sets


def _in_folders(folder, folders):
    return not folders or any(folder == wanted or (folder or "").startswith(wanted + "/") for wanted in folders)


def selected(fleet, options):
    """``(hosts, vms)`` of the fleet that the filters keep: hosts of ``clusters`` with ``host_tags``; VMs of
    ``clusters``, under ``folders``, in ``power_states`` and with ``tags`` (``tags_match``: any or all of them). An
    empty filter keeps all."""
    clusters, folders, states = options["clusters"], options["folders"], options["power_states"]
    match = options["tags_match"]
    hosts = [host for host in fleet["hosts"] if (not clusters or host["cluster"] in clusters)
             and tags_match(host.get("tags") or [], options["host_tags"], match)]
    vms = [vm for vm in fleet["vms"] if (not clusters or vm["cluster"] in clusters)
           and _in_folders(vm["folder"], folders) and (not states or vm["power_state"] in states)
           and tags_match(vm.get("tags") or [], options["tags"], match)]
    return hosts, vms


def _tag_vars(prefix, tags):
    """``<prefix>_tags`` (``["category:tag", ...]``) and ``<prefix>_tags_by_category`` (``{category: [tag]}``)."""
    by_category = {}
    for tag in tags:
        category, _sep, name = tag.partition(":")
        by_category.setdefault(category, []).append(name)
    return {prefix + "_tags": list(tags), prefix + "_tags_by_category": by_category}


def host_vars(host):
    """An ESXi host's variables: where it is, its state and its NVIDIA GPUs."""
    gpus = [{"pci_id": gpu["pci_id"], "model": gpu["model"], "device_name": gpu["device_name"],
             "memory_mib": gpu["memory_mib"], "graphics_type": gpu["graphics_type"],
             "configured_graphics_type": gpu["configured_graphics_type"], "vgpu_mode": gpu["vgpu_mode"],
             "profile": gpu["profile"], "passthrough": gpu["passthrough"]["enabled"]}
            for gpu in host["gpus"]]
    variables = {
        "esxi_cluster": host["cluster"],
        "esxi_datacenter": host["datacenter"],
        "esxi_connection_state": host["connection_state"],
        "esxi_maintenance_mode": host["maintenance_mode"],
        "esxi_gpu_models": sorted(set(gpu["model"] for gpu in gpus if gpu["model"])),
        "esxi_gpus": gpus,
    }
    if "tags" in host:
        variables.update(_tag_vars("esxi", host["tags"]))
    return variables


def _nvlink(vm, sets):
    """The NVLink sets a passthrough VM holds whole and whether its GPUs are exactly such sets; (None, None) when
    the sets of its host are not known."""
    if sets is None:
        return None, None
    held = set(vm["passthrough"])
    whole = [group for group in sets if set(group) <= held and len(group) > 1]
    return whole, bool(whole) and set(pci_id for group in whole for pci_id in group) == held


def vm_vars(vm, nvlink_sets):
    """A guest VM's variables: the names the roles read (``vgpu_profile``, ``vgpu_vm_name``, ``passthrough_*``)
    and where it runs."""
    variables = {
        "vm_moid": vm["moid"],
        "vm_uuid": vm["uuid"],
        "vm_host": vm["host"],
        "vm_cluster": vm["cluster"],
        "vm_datacenter": vm["datacenter"],
        "vm_folder": vm["folder"],
        "vm_power_state": vm["power_state"],
        "vm_guest_ip": vm["guest_ip"],
        "vm_gpu_models": vm["gpu_models"],
    }
    if "tags" in vm:
        variables.update(_tag_vars("vm", vm["tags"]))
    if vm["vgpus"]:
        variables.update(vgpu_profile=vm["vgpus"][0]["profile"], vgpu_vm_name=vm["name"])
        if len(vm["vgpus"]) > 1:
            variables["vgpu_profiles"] = [vgpu["profile"] for vgpu in vm["vgpus"]]
    if vm["passthrough"]:
        variables.update(passthrough_vm_name=vm["name"], passthrough_gpus=len(vm["passthrough"]),
                         passthrough_gpu_ids=vm["passthrough"])
        whole, nvlink = _nvlink(vm, nvlink_sets.get(vm["host"]))
        if whole is not None:
            variables.update(passthrough_nvlink=nvlink, passthrough_nvlink_set=whole)
    return variables


def vcenter_vars(options, hosts):
    """The connection variables of every host, as the playbooks read them (``playbooks/vars/vcenter.yml``); never the
    password: that stays in the user's vault."""
    variables = {"vcenter_hostname": options["hostname"], "vcenter_port": options["port"],
                 "vcenter_username": options["username"], "vcenter_validate_certs": options["validate_certs"]}
    datacenters = sorted(set(host["datacenter"] for host in hosts if host["datacenter"]))
    if len(datacenters) == 1:
        variables["vcenter_datacenter"] = datacenters[0]
    return variables


def build(fleet, options):
    """``{"groups": {group: {"hosts": [...], "children": [...], "vars": {...}}}, "hosts": {name: vars}}``: the
    inventory of the fleet's selected hosts and guest VMs. Two selected VMs of one name are refused: an inventory
    host names one VM."""
    hosts, vms = selected(fleet, options)
    inventory = {"groups": {
        HOSTS_GROUP: {"hosts": [host["name"] for host in hosts]},
        SERVERS_GROUP: {"children": [HOSTS_GROUP]},
        VGPU_GROUP: {"hosts": [vm["name"] for vm in vms if vm["vgpus"]]},
        PASSTHROUGH_GROUP: {"hosts": [vm["name"] for vm in vms if vm["passthrough"]]},
    }, "hosts": dict((host["name"], host_vars(host)) for host in hosts)}
    # The connection variables go where a hand-written inventory keeps them (group_vars/all.yml): every play that
    # loads playbooks/vars/vcenter.yml reads them, on the vcenter host and on the ESXi hosts alike, and the user's own
    # group_vars still take precedence over an inventory source's.
    inventory["groups"][ALL_GROUP] = {"vars": vcenter_vars(options, hosts)}
    if options.get("vcenter_host"):
        inventory["groups"][VCENTER_GROUP] = {"hosts": [options["vcenter_host"]]}
        inventory["hosts"][options["vcenter_host"]] = {"ansible_connection": "local",
                                                       "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    seen = {}
    for vm in vms:
        if vm["name"] in seen or vm["name"] in inventory["hosts"]:
            raise InputError("Two objects of vCenter are both named %s (%s and %s)." % (
                vm["name"], seen.get(vm["name"], "an ESXi host or the vcenter host"), vm["folder"] or vm["moid"]),
                hint="Rename one, or leave one out with the clusters, folders or power_states options.")
        seen[vm["name"]] = vm["folder"] or vm["moid"]
        inventory["hosts"][vm["name"]] = vm_vars(vm, options["nvlink_sets"])
    return inventory
