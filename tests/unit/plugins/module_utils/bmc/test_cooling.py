# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bmc_cooling's logic against scripted Dell and Supermicro BMCs: intents, validation before any change, check
mode, and the intent read back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, TimeoutExpired
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._cooling import apply_cooling, intent_of
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import BASE, FakeBmc

SYSTEMS = ("GET", "/rf/Systems/")
SYSTEM = ("GET", "/rf/Systems/1")
MANAGER = ("GET", "/rf/Managers/1")
ATTRIBUTES = "/redfish/v1/Managers/System.Embedded.1/Attributes"
FAN_MODE = "/rf/Managers/1/Oem/Supermicro/FanMode"

DELL_FACTORY = {"ThermalSettings.1.ThermalProfile": "Default Thermal Profile Settings",
                "ThermalSettings.1.FanSpeedOffset": "Off", "ThermalSettings.1.MinimumFanSpeed": 255,
                "ThermalSettings.1.MFSMinimumLimit": 32, "ThermalSettings.1.MFSMaximumLimit": 100,
                "ThermalSettings.1.ThirdPartyPCIFanResponse": "Enabled", "ServerOS.1.HostName": ""}


def server(manufacturer, manager, extra):
    routes = {SYSTEMS: (200, {}, {"Members": [{"@odata.id": "/rf/Systems/1"}]}),
              SYSTEM: (200, {}, {"@odata.id": "/rf/Systems/1", "Manufacturer": manufacturer, "Model": "M1",
                                 "Links": {"ManagedBy": [{"@odata.id": "/rf/Managers/1"}]}}),
              MANAGER: (200, {}, dict({"@odata.id": "/rf/Managers/1"}, **manager))}
    routes.update(extra)
    return FakeBmc(routes)


def dell(attributes=None, model="14G Monolithic"):
    links = {"Links": {"Oem": {"Dell": {"DellAttributes": [{"@odata.id": ATTRIBUTES}]}}}, "Model": model}
    return server("Dell Inc.", links, {
        ("GET", ATTRIBUTES): (200, {}, {"Attributes": dict(DELL_FACTORY, **(attributes or {}))}),
        ("PATCH", ATTRIBUTES): (200, {}, {})})


SCP = "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.%sSystemConfiguration"
TASK = "/redfish/v1/TaskService/Tasks/JID_%s"


def idrac8(import_task=None, **attributes):
    """An iDRAC8: no DellAttributes, the SCP actions advertised; the export's task answers with the profile."""
    values = dict(DELL_FACTORY, **attributes)
    xml = '<SystemConfiguration Model="PowerEdge R730"><Component FQDD="System.Embedded.1">%s</Component>' \
          '</SystemConfiguration>' % "".join('<Attribute Name="%s">%s</Attribute>' % (
              "#".join(name.rsplit(".", 1)), value)
              for name, value in sorted(values.items()))
    actions = {"Actions": {"Oem": dict(("#OemManager.%sSystemConfiguration" % kind, {"target": SCP % kind})
                                       for kind in ("Export", "Import"))}}
    jobs = {"@odata.type": "#DellManager.v1_0_0.DellManager", "Jobs": {"@odata.id": "/rf/Jobs"}}
    return server("Dell Inc.", dict(actions, Model="13G Monolithic", Links={"Oem": {"Dell": jobs}}), {
        ("POST", SCP % "Export"): (202, {"Location": "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_1"}, None),
        ("GET", TASK % 1): [(202, {}, {"TaskState": "Running", "Messages": []}), (200, {}, xml.encode())],
        ("POST", SCP % "Import"): (202, {"Location": TASK % 2}, None),
        ("GET", TASK % 2): import_task or (200, {}, {"TaskState": "Completed", "Messages": [
            {"Message": "Successfully imported and applied Server Configuration Profile."}]})})


def imports(bmc):
    return [body for method, path, body, _headers in bmc.log if method == "POST" and path == SCP % "Import"]


def test_idrac8_reads_by_export_and_imports_only_what_differs():
    bmc = idrac8()
    result = run(bmc, intent="passive_gpu")
    body, = imports(bmc)
    assert body["ShareParameters"] == {"Target": "System"} and body["ShutdownType"] == "NoReboot"
    assert body["ImportBuffer"] == (
        '<SystemConfiguration><Component FQDD="System.Embedded.1">'
        '<Attribute Name="ThermalSettings.1#FanSpeedOffset">Medium</Attribute>'
        '<Attribute Name="ThermalSettings.1#ThermalProfile">Maximum Performance</Attribute>'
        '</Component></SystemConfiguration>')
    assert result["changed"] and result["intent_before"] == "default" and patches(bmc) == []
    assert bmc.requests("GET").count(("GET", TASK % 1)) == 2 and bmc.requests("GET").count(("GET", TASK % 2)) == 1


def test_idrac8_check_mode_and_rerun_import_nothing():
    bmc = idrac8()
    assert run(bmc, intent="passive_gpu", check_mode=True)["changed"] is True
    done = idrac8(**{"ThermalSettings.1.ThermalProfile": "Maximum Performance",
                     "ThermalSettings.1.FanSpeedOffset": "Medium"})
    result = run(done, intent="passive_gpu")
    assert imports(bmc) == [] and imports(done) == [] and result["changed"] is False
    assert result["intent_before"] == "passive_gpu"


def test_idrac8_minimum_fan_speed_limits_come_from_the_export():
    with pytest.raises(InputError, match="20 is not a percent from 32 to 100"):
        run(idrac8(), settings={"MinimumFanSpeed": 20})
    run(idrac8(), settings={"MinimumFanSpeed": 255}, check_mode=True)


def test_idrac8_failed_import_job_fails_with_its_messages():
    failed = (200, {}, {"TaskState": "Completed", "Oem": {"Dell": {"JobState": "Failed"}}, "Messages": [
        {"Message": "Import of Server Configuration Profile operation completed with errors."},
        {"Message": "ThermalSettings.1#FanSpeedOffset: value not valid."}]})
    with pytest.raises(ApiError, match="job JID_2 ended Failed: Import of .* completed with errors. "
                                       "ThermalSettings.1#FanSpeedOffset: value not valid."):
        run(idrac8(import_task=failed), intent="max_cooling")


def test_idrac8_import_that_never_ends_times_out():
    running = (202, {}, {"TaskState": "Running", "Messages": [{"Message": "Job in progress."}]})
    bmc = idrac8(import_task=running)
    with pytest.raises(TimeoutExpired, match="did not end within 600 s"):
        run(bmc, intent="max_cooling")
    assert bmc.now >= 600


def supermicro(mode="Standard", allowed=("Standard", "FullSpeed", "HeavyIO", "PUE2")):
    return server("Supermicro", {"Oem": {"Supermicro": {"FanMode": {"@odata.id": FAN_MODE}}}}, {
        ("GET", FAN_MODE): (200, {}, {"Mode": mode, "Mode@Redfish.AllowableValues": list(allowed)}),
        ("PATCH", FAN_MODE): (200, {}, {})})


def run(bmc, **options):
    with bmc.client() as client:
        return apply_cooling(client, BASE, **options)


def patches(bmc):
    return [(path, body) for method, path, body, _headers in bmc.log if method == "PATCH"]


def test_dell_passive_gpu_sends_only_what_differs_in_one_patch():
    bmc = dell()
    result = run(bmc, intent="passive_gpu")
    assert patches(bmc) == [(ATTRIBUTES, {"Attributes": {
        "ThermalSettings.1.ThermalProfile": "Maximum Performance", "ThermalSettings.1.FanSpeedOffset": "Medium"}})]
    assert result["changed"] and result["intent_before"] == "default" and not result["pending_reboot"]
    assert result["diff"]["after"]["current"]["ThermalSettings.1.FanSpeedOffset"] == "Medium"


def test_dell_check_mode_and_rerun_send_nothing():
    bmc = dell()
    assert run(bmc, intent="passive_gpu", check_mode=True)["changed"] is True
    done = dell({"ThermalSettings.1.ThermalProfile": "Maximum Performance",
                 "ThermalSettings.1.FanSpeedOffset": "Medium"})
    result = run(done, intent="passive_gpu")
    assert patches(bmc) == [] and patches(done) == []
    assert result["changed"] is False and result["intent_before"] == "passive_gpu"


@pytest.mark.parametrize("settings, words", [
    ({"FanSpeedOffset": "Huge"}, "'Huge' is not one of Off, Low, Medium, High, Max"),
    ({"FanSpeedOffset": False}, "quote Off"),
    ({"MinimumFanSpeed": 20}, "20 is not a percent from 32 to 100, nor 255"),
    ({"MFSMinimumLimit": 10}, "ThermalSettings.1.MFSMinimumLimit is not a thermal setting this module sets"),
])
def test_dell_values_not_allowed_are_refused_before_any_change(settings, words):
    bmc = dell()
    with pytest.raises(InputError) as err:
        run(bmc, settings=settings)
    assert words in str(err.value) and patches(bmc) == []


def test_sound_cap_is_refused_on_idrac8():
    bmc = dell(model="13G Monolithic")
    with pytest.raises(InputError, match="'Sound Cap' is not one of"):
        run(bmc, settings={"ThermalProfile": "Sound Cap"})
    assert run(dell(), settings={"ThermalProfile": "Sound Cap"}, check_mode=True)["changed"] is True


def test_dell_without_system_attributes_says_so():
    bmc = server("Dell Inc.", {"Model": "13G Monolithic"}, {})
    with pytest.raises(ApiError, match="links no system attributes .* and advertises no Server Configuration"):
        run(bmc, intent="default")


def test_supermicro_intent_takes_the_first_mode_the_board_offers():
    bmc = supermicro(mode="FullSpeed", allowed=("Optimal", "FullSpeed", "HeavyIO"))
    result = run(bmc, intent="default")
    assert patches(bmc) == [(FAN_MODE, {"Mode": "Optimal"})]
    assert result["intent_before"] == "max_cooling"


def test_supermicro_refuses_a_mode_the_board_does_not_offer():
    bmc = supermicro()
    with pytest.raises(InputError, match="'Optimal' is not one of Standard, FullSpeed, HeavyIO, PUE2"):
        run(bmc, settings={"Mode": "Optimal"})
    with pytest.raises(InputError, match="Intent max_cooling needs fan mode FullSpeed"):
        run(supermicro(allowed=("Standard",)), intent="max_cooling")
    assert patches(bmc) == []


def test_generic_bmc_and_empty_settings_are_refused():
    with pytest.raises(ApiError, match="knows the cooling settings of Dell iDRAC, HPE iLO and Supermicro"):
        run(server("Lenovo", {}, {}), intent="default")
    with pytest.raises(InputError, match="settings is empty"):
        run(dell(), settings={})


def test_intent_of_settings_made_by_hand_is_none():
    assert intent_of("hpe", {"ThermalConfig": "EnhancedCPUCooling"}) is None
    assert intent_of("hpe", {"ThermalConfig": "MaxCooling"}) == "max_cooling"
    assert intent_of("supermicro", {"Mode": "PUE2"}) is None
