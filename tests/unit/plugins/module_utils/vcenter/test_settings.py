# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vcenter_settings typing with real pyVmomi option types, checked down to the SOAP types they are sent as."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _settings as vs
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

pyVmomi = pytest.importorskip("pyVmomi")
vim = pyVmomi.vim
SoapAdapter = pyVmomi.SoapAdapter
VmomiSupport = pyVmomi.VmomiSupport


def _wire_type(value):
    """The xsi:type pyVmomi puts on an OptionValue's value."""
    xml = SoapAdapter.Serialize(vim.option.OptionValue(key="k", value=value))
    if isinstance(xml, bytes):
        xml = xml.decode()
    return xml.split('<value xsi:type="')[1].split('"')[0]


BOOL = vim.option.BoolOption(supported=True, defaultValue=False)
INT = vim.option.IntOption(min=1, max=100, defaultValue=10)
LONG = vim.option.LongOption(min=0, max=2 ** 40, defaultValue=0)
FLOAT = vim.option.FloatOption(min=0.0, max=1.0, defaultValue=0.5)
STRING = vim.option.StringOption(defaultValue="", validCharacters="")
CHOICE = vim.option.ChoiceOption(choiceInfo=[vim.ElementDescription(key="info", label="Info", summary="Info"),
                                             vim.ElementDescription(key="verbose", label="Verbose", summary="Verbose")],
                                 defaultIndex=0)


@pytest.mark.parametrize("given, expected", [
    (True, True), (False, False), ("true", True), ("False", False), ("yes", True), ("no", False), ("on", True),
    ("OFF", False), ("1", True), ("0", False), (1, True), (0, False),
])
def test_bool_options_take_words_and_travel_as_booleans(given, expected):
    value = vs.typed_value("vgpu.hotmigrate.enabled", given, BOOL)
    assert value is expected
    assert _wire_type(value) == "xsd:boolean"


@pytest.mark.parametrize("given", ["maybe", 2, "", "truee"])
def test_bool_options_refuse_other_values(given):
    with pytest.raises(InputError, match="takes a boolean"):
        vs.typed_value("vgpu.hotmigrate.enabled", given, BOOL)


def test_int_and_long_options_are_sent_with_their_own_wire_type():
    assert vs.typed_value("a.int", "42", INT) == 42
    assert _wire_type(vs.typed_value("a.int", "42", INT)) == "xsd:int"
    long_value = vs.typed_value("a.long", " 1099511627776 ", LONG)
    assert isinstance(long_value, VmomiSupport.long) and long_value == 2 ** 40
    assert _wire_type(long_value) == "xsd:long"
    assert _wire_type(vs.typed_value("a.long", 5, LONG)) == "xsd:long"
    assert vs.typed_value("a.float", "0.25", FLOAT) == 0.25


@pytest.mark.parametrize("option, given, words", [
    (INT, "ten", ["a.key", "whole number", "'ten'"]),
    (INT, "4.5", ["'4.5'"]),
    (INT, 4.5, ["not whole"]),
    (INT, True, ["whole number"]),
    (INT, 101, ["between 1 and 100"]),
    (LONG, -1, ["between 0 and"]),
    (FLOAT, "2", ["between 0.0 and 1.0"]),
])
def test_numbers_that_do_not_fit_fail(option, given, words):
    with pytest.raises(InputError) as err:
        vs.typed_value("a.key", given, option)
    for word in words:
        assert word in str(err.value)


def test_choice_options_accept_only_their_choices():
    assert vs.typed_value("log.level", "verbose", CHOICE) == "verbose"
    assert vs.typed_value("log.level", "Verbose", CHOICE) == "verbose"
    with pytest.raises(InputError, match="Choices: info, verbose"):
        vs.typed_value("log.level", "trivia", CHOICE)


def test_string_options_and_read_only_options():
    assert vs.typed_value("a.str", 5, STRING) == "5"
    assert vs.typed_value("a.str", True, STRING) == "true"
    digits = vim.option.StringOption(defaultValue="", validCharacters="0123456789")
    with pytest.raises(InputError, match="character"):
        vs.typed_value("a.str", "12a", digits)
    readonly = vim.option.BoolOption(valueIsReadonly=True, supported=True, defaultValue=False)
    with pytest.raises(InputError, match="read-only"):
        vs.typed_value("a.ro", True, readonly)


def test_keys_without_definition_are_typed_like_their_value():
    assert vs.typed_like("x", "yes", False) is True
    assert isinstance(vs.typed_like("x", "7", VmomiSupport.long(3)), VmomiSupport.long)
    assert vs.typed_like("x", "7", 3) == 7
    assert vs.typed_like("x", 7, "old") == "7"


def test_unknown_keys_fail_with_close_matches_unless_allowed():
    definitions = {"vgpu.hotmigrate.enabled": BOOL, "config.log.level": CHOICE}
    with pytest.raises(InputError) as err:
        vs.wanted_values({"vgpu.hotmigrate.enable": True}, definitions, {}, allow_new=False)
    assert "vgpu.hotmigrate.enable" in str(err.value) and "vgpu.hotmigrate.enabled" in str(err.value)
    assert "allow_new" in str(err.value)
    assert vs.wanted_values({"config.new.key": True}, definitions, {}, allow_new=True) == {"config.new.key": "true"}


def test_same_value_tells_booleans_from_numbers():
    assert vs.same_value(True, True)
    assert not vs.same_value(1, True)
    assert not vs.same_value(True, 1)
    assert vs.same_value(VmomiSupport.long(5), 5)
    assert not vs.same_value("5", 5)


class FakeClient:
    """An OptionManager behind ``retrieve_objects`` and ``call``: definitions, values and the updates sent."""

    def __init__(self, definitions, values):
        self.definitions = definitions
        self.values = dict(values)
        self.updates = []
        self.content = self
        self.setting = self

    def retrieve_objects(self, objects, properties):
        assert properties == ["supportedOption", "setting"]
        return [{"obj": objects[0], "moid": "VpxSettings",
                 "supportedOption": [vim.option.OptionDef(key=key, label=key, summary=key, optionType=kind)
                                     for key, kind in self.definitions.items()],
                 "setting": [vim.option.OptionValue(key=key, value=value) for key, value in self.values.items()]}]

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def UpdateOptions(self, changedValue):
        self.updates.append(changedValue)
        for option in changedValue:
            self.values[option.key] = option.value


def test_only_changed_keys_are_sent_in_one_update_and_a_rerun_sends_nothing():
    client = FakeClient({"vgpu.hotmigrate.enabled": BOOL, "a.int": INT, "a.long": LONG},
                        {"vgpu.hotmigrate.enabled": False, "a.int": 10, "a.long": VmomiSupport.long(7)})
    settings = {"vgpu.hotmigrate.enabled": "true", "a.int": "10", "a.long": 8}

    predicted = vs.apply_settings(client, {"settings": settings, "allow_new": False}, check_mode=True)
    assert client.updates == []
    assert predicted["changed_keys"] == ["a.long", "vgpu.hotmigrate.enabled"]

    result = vs.apply_settings(client, {"settings": settings, "allow_new": False}, check_mode=False)
    assert len(client.updates) == 1
    sent = dict((option.key, option.value) for option in client.updates[0])
    assert sent == {"vgpu.hotmigrate.enabled": True, "a.long": 8}
    assert sent["vgpu.hotmigrate.enabled"] is True
    assert isinstance(sent["a.long"], VmomiSupport.long)
    assert result["settings"] == {"before": {"vgpu.hotmigrate.enabled": False, "a.int": 10, "a.long": 7},
                                  "after": {"vgpu.hotmigrate.enabled": True, "a.int": 10, "a.long": 8}}
    assert result["settings"] == predicted["settings"]
    assert result["diff"] == {"before": {"a.long": 7, "vgpu.hotmigrate.enabled": False},
                              "after": {"a.long": 8, "vgpu.hotmigrate.enabled": True}}
    assert result["settings"]["after"]["a.long"].__class__ is int, "plain JSON data, not pyVmomi's long"

    again = vs.apply_settings(client, {"settings": settings, "allow_new": False}, check_mode=False)
    assert again["changed"] is False and again["changed_keys"] == []
    assert len(client.updates) == 1


def test_bad_values_fail_before_anything_is_sent():
    client = FakeClient({"vgpu.hotmigrate.enabled": BOOL, "a.int": INT}, {"vgpu.hotmigrate.enabled": False})
    with pytest.raises(InputError, match="a.int"):
        vs.apply_settings(client, {"settings": {"vgpu.hotmigrate.enabled": True, "a.int": "lots"}, "allow_new": False},
                          check_mode=False)
    assert client.updates == []
