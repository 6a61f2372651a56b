# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_driver role's filters: thin wrappers whose errors become filter errors named after the filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import host_driver
from ansible_collections.gpuops.vgpu.tests.unit.plugins.plugin_utils.test_host_driver_plan import (
    DRIVER,
    DRIVER_VERSION,
    LOCATIONS,
    converged_read,
)


def test_filter_module_maps_the_names():
    assert host_driver.FilterModule().filters() == {"host_driver_checks": host_driver.host_driver_checks,
                                                    "host_driver_plan": host_driver.host_driver_plan}


def test_filters_on_a_read():
    read = converged_read()
    assert host_driver.host_driver_plan(read, LOCATIONS, check_mode=True)["converged"] is True
    checks = host_driver.host_driver_checks(read["compliance"], {DRIVER: DRIVER_VERSION}, ["esxi-01.lab.local"])
    assert checks == [{"name": "esxi-01.lab.local", "ok": True,
                       "message": "Host esxi-01.lab.local runs %s %s." % (DRIVER, DRIVER_VERSION)}]


@pytest.mark.parametrize("filter_name, args, needle", [
    ("host_driver_plan", (converged_read(), LOCATIONS[:1]), "2 bundles were read for 1 locations"),
    ("host_driver_plan", ({"bundles": [{}]}, LOCATIONS[:1]), "'path'"),
    ("host_driver_checks", ({"hosts": [{"status": "COMPLIANT"}]}, {}), "'name'"),
])
def test_bad_input_becomes_a_filter_error(filter_name, args, needle):
    with pytest.raises(AnsibleFilterError) as err:
        getattr(host_driver, filter_name)(*args)
    assert needle in str(err.value) and str(err.value).startswith(filter_name)
