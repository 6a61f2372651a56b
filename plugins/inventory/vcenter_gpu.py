# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: vcenter_gpu
short_description: GPU hosts, vGPU guests and passthrough guests from one read of vCenter
version_added: 0.1.0
description:
  - Builds the inventory the collection's playbooks use from what vCenter already knows - C(esxi_hosts) (hosts with
    NVIDIA GPUs), C(gpu_guests) (VMs with a vGPU) and C(passthrough_guests) (VMs with whole GPUs) - with the
    variables the roles read (C(vgpu_profile), C(vgpu_vm_name), C(passthrough_gpus), C(passthrough_nvlink)), and a
    C(vcenter) group whose host talks to vCenter. Variables vCenter does not know (BMC addresses and accounts,
    tokens, SSH settings) still come from the user's own C(group_vars) and C(host_vars).
  - Reads vCenter once - one PropertyCollector call for the inventory tree, the hosts' GPUs and every VM's devices,
    the same round trips for 10 VMs or 1,000 - through the collection's own vCenter client, which the modules use.
    vCenter may still split a very large answer into pages (C(ContinueRetrievePropertiesEx)), as the API allows
    when no page size is asked for.
  - ESXi host variables - C(esxi_cluster), C(esxi_datacenter), C(esxi_connection_state), C(esxi_maintenance_mode),
    C(esxi_gpu_models) and C(esxi_gpus) (per GPU C(pci_id), C(model), C(device_name), C(memory_mib),
    C(graphics_type) in effect, C(configured_graphics_type), C(vgpu_mode), C(profile) carved, C(passthrough)).
  - Guest variables - C(vgpu_profile) and C(vgpu_vm_name) (VMs with a vGPU; C(vgpu_profiles) when a VM has several),
    C(passthrough_vm_name), C(passthrough_gpus) (the number of whole GPUs), C(passthrough_gpu_ids) (their PCI ids on
    the host) and, for hosts named in O(nvlink_sets), C(passthrough_nvlink) (its GPUs are whole NVLink sets) and
    C(passthrough_nvlink_set) (the sets it holds); for both kinds C(vm_moid), C(vm_uuid), C(vm_host),
    C(vm_cluster), C(vm_datacenter), C(vm_folder), C(vm_power_state), C(vm_guest_ip) and C(vm_gpu_models).
    C(ansible_host) is VMware Tools' guest IP address, or O(address_template) when set.
  - Every host gets C(vcenter_hostname), C(vcenter_port), C(vcenter_username), C(vcenter_validate_certs) and, when
    the GPU hosts are all in one datacenter, C(vcenter_datacenter), as variables of the C(all) group - where a
    hand-written inventory keeps them (C(group_vars/all.yml)) and where the plays read them, on the C(vcenter) host
    and on the ESXi hosts alike (C(playbooks/vars/vcenter.yml)). The user's own C(group_vars) and C(host_vars) still
    take precedence. The password never becomes a variable; C(vcenter_password) stays in the user's vault.
  - With a tag filter (O(tags), O(host_tags)) or O(gather_tags), vSphere tags are read through vCenter's tagging
    service (the Automation API's REST interface, a session of its own) in a number of requests that does not grow
    with the VMs - one C(list-attached-tags-on-objects) for every host and VM read, then one read per distinct tag
    and category attached - and the guests get C(vm_tags) (V(category:tag) strings) and C(vm_tags_by_category)
    (each category mapped to its tags), the ESXi hosts C(esxi_tags) and C(esxi_tags_by_category).
  - Hosts are named as in vCenter, guests by their VM's name; two kept VMs of one name are refused, naming both.
    Templates are left out.
  - The inventory file's name must end in C(vcenter_gpu.yml) or C(vcenter_gpu.yaml).
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - constructed
  - inventory_cache
requirements:
  - pyVmomi
  - requests, for the tags (O(tags), O(host_tags), O(gather_tags))
options:
  plugin:
    description: The name of this plugin; it makes the file an inventory source of this plugin.
    required: true
    type: str
    choices: [gpuops.vgpu.vcenter_gpu]
  hostname:
    description:
      - Name or address of the vCenter Server. Required, here or in the environment.
    type: str
    env:
      - name: VMWARE_HOST
      - name: VMWARE_SERVER
  username:
    description:
      - vCenter user, for example V(administrator@vsphere.local). Required, here or in the environment.
    type: str
    env:
      - name: VMWARE_USER
      - name: VMWARE_USERNAME
  password:
    description:
      - Password of O(username); a vault-encrypted value or a template (a lookup) is accepted. It is never shown in
        the inventory, its variables or its errors.
      - Required, here or in the environment, unless O(password_file) is set.
    type: str
    env:
      - name: VMWARE_PASSWORD
  password_file:
    description:
      - A file that holds the password of O(username) (its first line), as a credential injects it into the private
        directory of an AWX inventory update. Mutually exclusive with O(password).
    type: path
    env:
      - name: GPUOPS_VCENTER_PASSWORD_FILE
  port:
    description: HTTPS port of the vCenter Server.
    type: int
    default: 443
    env:
      - name: VMWARE_PORT
  validate_certs:
    description:
      - Verify the vCenter Server's TLS certificate.
      - Set to V(false) only for labs with self-signed certificates; to trust a private CA, point E(SSL_CERT_FILE)
        at its bundle instead.
    type: bool
    default: true
    env:
      - name: VMWARE_VALIDATE_CERTS
  clusters:
    description:
      - Keep only the hosts and VMs of these clusters. Empty keeps every cluster and standalone host.
    type: list
    elements: str
    default: []
  folders:
    description:
      - Keep only the VMs in these VM folders or below them, each given by its path from the datacenter
        (V(/dc1/vm/ml)). Empty keeps VMs of every folder. Hosts are kept whatever their folder.
    type: list
    elements: str
    default: []
  power_states:
    description:
      - Keep only the VMs in these power states. Empty keeps all.
    type: list
    elements: str
    choices: [poweredOn, poweredOff, suspended]
    default: []
  tags:
    description:
      - Keep only the VMs with these vSphere tags, each V(category:tag), or a tag name alone for that tag in any
        category. O(tags_match) says whether one of them is enough. Empty keeps VMs whatever their tags.
    type: list
    elements: str
    default: []
  host_tags:
    description:
      - Keep only the ESXi hosts with these vSphere tags, written as in O(tags). Empty keeps hosts whatever their tags.
    type: list
    elements: str
    default: []
  tags_match:
    description:
      - V(any) keeps an object with at least one of the tags of O(tags) (O(host_tags) for hosts), V(all) one with
        every one of them.
    type: str
    choices: [any, all]
    default: any
  gather_tags:
    description:
      - Read the vSphere tags of the hosts and VMs for their variables (C(vm_tags), C(esxi_tags), ...) even without
        a tag filter, for O(keyed_groups), O(groups) and O(compose) over them.
    type: bool
    default: false
  nvlink_sets:
    description:
      - The NVLink sets of the passthrough hosts, by ESXi host name, as lists of PCI ids (the shape of the
        inventory's C(passthrough_nvlink_sets)). vCenter does not report NVLink; without the sets of its host a
        passthrough guest gets no C(passthrough_nvlink).
    type: dict
    default: {}
  address_template:
    description:
      - A template of each guest's C(ansible_host) over its variables, for example
        V({{ inventory_hostname }}.ml.example.com). Default is VMware Tools' guest IP address (none when Tools does
        not report one).
    type: str
  vcenter_host:
    description:
      - The host of the C(vcenter) group, from which the playbooks talk to vCenter, run with a local connection
        and the controller's Python. An empty string adds no C(vcenter) group.
    type: str
    default: localhost
  keyed_groups:
    description:
      - Groups from the hosts' variables, as in P(ansible.builtin.constructed#inventory). The default groups hosts and guests
        by cluster (V(cluster_gpu_cluster)), GPU model (V(gpu_P40)) and vGPU profile (V(vgpu_grid_p40_8q)); its
        keys give lists, so that O(strict) accepts hosts without a cluster or a profile.
    type: list
    elements: dict
    default:
      - {prefix: cluster, key: "[esxi_cluster | default(vm_cluster)] | reject('none') | list"}
      - {prefix: gpu, key: "esxi_gpu_models | default(vm_gpu_models)"}
      - {prefix: vgpu, key: "[vgpu_profile] if vgpu_profile is defined else []"}
notes:
  - O(compose), O(groups) and O(keyed_groups) apply to the ESXi hosts and the guests, not to the C(vcenter) host.
  - Tags are read only for O(tags), O(host_tags) or O(gather_tags); the user needs the read privilege on the tags
    and their categories (vCenter leaves out of the answers the tags a user cannot read).
  - With O(cache) on, a second run within O(cache_timeout) reads nothing from vCenter.
seealso:
  - module: gpuops.vgpu.gpu_info
"""

EXAMPLES = r"""
# inventories/datacenter/gpu.vcenter_gpu.yml; vcenter_password in group_vars/vcenter/vault.yml, BMC addresses in
# host_vars, as in a hand-written inventory.
plugin: gpuops.vgpu.vcenter_gpu
hostname: vcenter.dc1.example.com
username: svc-gpuops@vsphere.local
password: !vault |
  $ANSIBLE_VAULT;1.1;AES256
  ...
clusters: [gpu-cluster]
power_states: [poweredOn]

---
# Only the training VMs' folder, guests reached by DNS name, the A100 host's NVLink pairs, and the cache
plugin: gpuops.vgpu.vcenter_gpu
folders: [/dc1/vm/training]
address_template: "{{ inventory_hostname }}.ml.example.com"
nvlink_sets:
  esx-hpc-01.dc1.example.com:
    - ["0000:3b:00.0", "0000:5e:00.0"]
    - ["0000:86:00.0", "0000:af:00.0"]
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/gpuops-inventory
cache_timeout: 600

---
# Only the VMs tagged gpu-tier:gold or gpu-tier:silver on the hosts tagged gpuops:managed; groups by tag
# (tag_gpu_tier_gold, ...) and by the gpu-tier category's tags (tier_gold, ...)
plugin: gpuops.vgpu.vcenter_gpu
tags: [gpu-tier:gold, gpu-tier:silver]
host_tags: [gpuops:managed]
keyed_groups:
  - {prefix: tag, key: "vm_tags | default(esxi_tags)"}
  - {prefix: tier, key: "vm_tags_by_category['gpu-tier'] | default([])"}

---
# The connection from the environment (VMWARE_HOST, VMWARE_USER, VMWARE_PASSWORD), groups of your own
plugin: gpuops.vgpu.vcenter_gpu
groups:
  training: "'training' in vm_folder | default('')"
compose:
  gpu_validate_cuda_version: "'12.4' if vgpu_profile | default('') is search('a100') else '11.6'"
"""

from ansible.errors import AnsibleParserError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _vcenter_gpu_inventory as rules

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every inventory string as a template
    def trust_as_template(value):
        return value

OPTION_NAMES = ("hostname", "username", "password", "password_file", "port", "validate_certs", "clusters", "folders",
                "power_states", "tags", "host_tags", "tags_match", "gather_tags", "nvlink_sets", "vcenter_host")


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):

    NAME = "gpuops.vgpu.vcenter_gpu"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(
            ("vcenter_gpu.yml", "vcenter_gpu.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache=cache)
        self._read_config_data(path)
        try:
            options = rules.check_options(self._checked_options())
        except GpuopsError as err:
            raise AnsibleParserError("%s: %s" % (path, err))
        key = self.get_cache_key(path)
        fleet = None
        if cache and self.get_option("cache"):
            fleet = self._cache.get(key)
        if fleet is None or (rules.needs_tags(options) and not fleet.get("tags_read")):
            fleet = self._read(options)
            if self.get_option("cache"):
                self._cache[key] = fleet
        try:
            self._populate(rules.build(fleet, options))
        except GpuopsError as err:
            raise AnsibleParserError("%s: %s" % (path, err))

    def _checked_options(self):
        options = dict((name, self.get_option(name)) for name in OPTION_NAMES)
        for name in ("hostname", "username", "password"):
            value = options[name]
            if value is not None:
                value = to_native(value)
                if self.templar.is_template(value):
                    value = to_native(self.templar.template(trust_as_template(value)))
            options[name] = value
        return options

    def _password(self, options):
        if options["password"]:
            return options["password"]
        try:
            with open(options["password_file"]) as handle:
                return handle.readline().rstrip("\r\n")
        except (IOError, OSError) as err:
            raise AnsibleParserError("password_file %s cannot be read: %s. Point it at a readable file."
                                     % (options["password_file"], err.strerror))

    def _read(self, options):
        # Imported here: pyVmomi is needed only when vCenter is read, not for a cached inventory.
        from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
        from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
        from ansible_collections.gpuops.vgpu.plugins.plugin_utils._vcenter_fleet import add_tags, read_fleet

        password = self._password(options)
        try:
            with VCenterClient(options["hostname"], options["username"], password,
                               port=options["port"], validate_certs=options["validate_certs"]) as client:
                fleet = read_fleet(client)
            if rules.needs_tags(options):
                with VCenterRestClient(options["hostname"], options["username"], password, port=options["port"],
                                       validate_certs=options["validate_certs"]) as rest:
                    fleet = add_tags(fleet, rest)
            return fleet
        except GpuopsError as err:
            raise AnsibleParserError("gpuops.vgpu.vcenter_gpu: %s" % err)

    def _populate(self, built):
        for group, content in built["groups"].items():
            self.inventory.add_group(group)
            for child in content.get("children") or []:
                self.inventory.add_group(child)
                self.inventory.add_child(group, child)
            for name in content.get("hosts") or []:
                self.inventory.add_host(name, group=group)
            for variable, value in (content.get("vars") or {}).items():
                self.inventory.set_variable(group, variable, value)
        strict = self.get_option("strict")
        template = self.get_option("address_template")
        vcenter_host = built["groups"].get(rules.VCENTER_GROUP, {}).get("hosts") or []
        for name, variables in built["hosts"].items():
            self.inventory.add_host(name)
            for variable, value in variables.items():
                if variable == "ansible_python_interpreter":
                    value = trust_as_template(value)
                self.inventory.set_variable(name, variable, value)
            if name in vcenter_host:
                continue
            if "vm_moid" in variables:
                self._set_address(name, variables, template, strict)
            self._set_composite_vars(self.get_option("compose"), variables, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, name, strict=strict)

    def _set_address(self, name, variables, template, strict):
        address = variables["vm_guest_ip"]
        if template:
            self.templar.available_variables = dict(variables, inventory_hostname=name)
            try:
                address = self.templar.template(template)
            except Exception as err:  # noqa: BLE001 - a template's error is the user's to read
                if strict:
                    raise AnsibleParserError("address_template for %s: %s" % (name, to_native(err)))
                address = None
        if address:
            self.inventory.set_variable(name, "ansible_host", address)
