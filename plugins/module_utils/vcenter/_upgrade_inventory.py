# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an upgrade plan needs from vCenter: the GPU inventory, which profiles may suspend, whether vGPU VMs vMotion.

Five PropertyCollector round trips whatever the number of hosts and VMs: the inventory's three (``_inventory``), the
hosts' ``config.sharedGpuCapabilities`` and vCenter's advanced settings. ``plan_upgrade`` is the ``upgrade_plan``
module's work.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._upgrade import refusal, upgrade_plan
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import read_inventory
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._settings import read_settings, to_bool

HOT_MIGRATE_SETTING = "vgpu.hotmigrate.enabled"
PLAN_OPTIONS = ("target_guest_driver", "policy", "vm_policies", "max_hosts_out", "host_drivers",
                "current_host_driver", "guest_drivers", "current_guest_driver", "depot_host_drivers",
                "remediation_s", "guest_cuda", "current_guest_cuda")


def plan_upgrade(client, params, check_mode):
    """The ``upgrade_plan`` module: the plan of the inventory read here, its notes as warnings; a refused plan
    fails unless ``allow_blocked``."""
    hosts, hot_migrate = read_upgrade_inventory(client, cluster=params["cluster"],
                                                esxi_hostnames=params["esxi_hostnames"],
                                                datacenter=params["datacenter"])
    options = dict((name, params[name]) for name in PLAN_OPTIONS)
    result = upgrade_plan(hosts, params["target_host_driver"], hot_migrate=hot_migrate, **options)
    problem = refusal(result)
    if problem is not None and not params["allow_blocked"]:
        raise problem
    return dict(result, hot_migrate=hot_migrate, warnings=list(result["notes"]))


def read_upgrade_inventory(client, cluster=None, esxi_hostnames=None, datacenter=None):
    """``(hosts, hot_migrate)``: ``gpu_info``'s hosts, each with ``suspend_profiles`` (the profiles whose
    ``HostSharedGpuCapabilities.suspendSupported`` is true), and the value of ``vgpu.hotmigrate.enabled``."""
    hosts = read_inventory(client, cluster=cluster, esxi_hostnames=esxi_hostnames, datacenter=datacenter)["hosts"]
    capabilities = client.hosts(["config.sharedGpuCapabilities"], cluster=cluster, esxi_hostnames=esxi_hostnames,
                                datacenter=datacenter)
    suspend = dict((item["name"], sorted(cap.vgpu for cap in item.get("config.sharedGpuCapabilities") or []
                                         if cap.suspendSupported)) for item in capabilities)
    for host in hosts:
        host["suspend_profiles"] = suspend.get(host["name"], [])
    _definitions, values = read_settings(client)
    hot_migrate = values.get(HOT_MIGRATE_SETTING)
    return hosts, to_bool(HOT_MIGRATE_SETTING, hot_migrate) if hot_migrate is not None else False
