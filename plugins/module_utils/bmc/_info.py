# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``bmc_info`` returns: identity, BIOS current and pending, power, health and thermal readings of a server."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios import pending_values
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_access import BiosAccess
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_settings import apply_bios_settings
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._thermal import read_thermal
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import link_of


def read_bmc(client, params, check_mode):
    """What ``bmc_info`` returns; with the ``bios_profile`` option also the BIOS compared with it, as
    ``bios_settings`` in check mode returns it (``bios_profile``, or its failure in ``bios_profile_error``)."""
    system = client.system()
    vendor = client.vendor()
    bios = {"attributes": {}, "pending": {}, "registry": None, "supported_apply_times": []}
    if link_of(system, "Bios"):
        read = BiosAccess(client).read()
        bios = {"attributes": read["current"], "pending": pending_values(read["current"], read["shown"]),
                "registry": read["registry"], "supported_apply_times": read["apply_times"]}
    thermal = read_thermal(client)
    status = system.get("Status") or {}
    inlet = [t["reading_celsius"] for t in thermal["temperatures"] if t["context"] == "Intake"]
    result = dict(
        vendor=vendor,
        manufacturer=system.get("Manufacturer"),
        model=system.get("Model"),
        serial_number=system.get("SerialNumber"),
        sku=system.get("SKU"),
        uuid=system.get("UUID"),
        bios_version=system.get("BiosVersion"),
        power_state=system.get("PowerState"),
        health={"health": status.get("Health"), "rollup": status.get("HealthRollup"), "state": status.get("State")},
        bios=bios,
        thermal_schema=thermal["schema"],
        temperatures=thermal["temperatures"],
        fans=thermal["fans"],
        inlet_celsius=inlet[0] if inlet else None,
    )
    if params["bios_profile"]:
        result["bios_profile"], result["bios_profile_error"] = _compare_profile(client, params["baseuri"],
                                                                                params["bios_profile"])
    return result


def _compare_profile(client, baseuri, profile):
    try:
        compared = apply_bios_settings(client, baseuri, profile=profile, check_mode=True)
    except GpuopsError as err:
        return None, str(err)
    compared.pop("diff", None)
    return compared, None
