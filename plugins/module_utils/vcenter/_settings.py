# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed vCenter advanced settings (``content.setting``, the vCenter OptionManager).

Every value is converted to the type its option declares in ``supportedOption[].optionType`` before it is sent:
vCenter rejects a string for a bool option, so ``vgpu.hotmigrate.enabled: true`` has to travel as a boolean.
Definitions and current values are read in one round trip; only changed keys are sent, in one UpdateOptions.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

try:
    from pyVmomi import VmomiSupport, vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = VmomiSupport = None

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


def to_bool(key, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise InputError("Setting %s takes a boolean; '%s' is not one." % (key, value),
                     hint="Use true or false (yes/no, on/off and 1/0 are accepted too).")


def _to_number(key, value, kind, convert, option):
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise InputError("Setting %s takes %s; %r is not one." % (key, kind, value), hint="Give a number.")
    try:
        number = convert(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise InputError("Setting %s takes %s; '%s' cannot be read as one." % (key, kind, value), hint="Give a number.")
    if convert is int and isinstance(value, float) and number != value:
        raise InputError("Setting %s takes %s; %s is not whole." % (key, kind, value), hint="Give a whole number.")
    low, high = getattr(option, "min", None), getattr(option, "max", None)
    if (low is not None and number < low) or (high is not None and number > high):
        raise InputError("Setting %s must be between %s and %s; %s is outside." % (key, low, high, value),
                         hint="Give a value in that range.")
    return number


def _to_string(key, value, option):
    if isinstance(value, (list, dict)):
        raise InputError("Setting %s takes a string, not %s." % (key, type(value).__name__), hint="Give a string.")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    valid = getattr(option, "validCharacters", None)
    if valid:
        wrong = sorted(set(char for char in text if char not in valid))
        if wrong:
            raise InputError("Setting %s does not accept the character(s) %s." % (key, "".join(wrong)),
                             hint="Allowed characters: %s." % valid)
    return text


def _to_choice(key, value, option):
    choices = [choice.key for choice in option.choiceInfo or []]
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if text in choices:
        return text
    folded = [choice for choice in choices if choice.lower() == text.lower()]
    if len(folded) == 1:
        return folded[0]
    raise InputError("Setting %s does not accept '%s'." % (key, value), hint="Choices: %s." % ", ".join(choices))


def typed_value(key, value, option_type):
    """``value`` as the Python type pyVmomi must send for an option of ``option_type`` (a vim.option.OptionType)."""
    if getattr(option_type, "valueIsReadonly", False):
        raise InputError("Setting %s is read-only." % key, hint="Leave it out of settings.")
    if isinstance(option_type, vim.option.BoolOption):
        return to_bool(key, value)
    if isinstance(option_type, vim.option.LongOption):
        # A plain int would be sent as xsd:int; a long option needs xsd:long.
        return VmomiSupport.long(_to_number(key, value, "a whole number", int, option_type))
    if isinstance(option_type, vim.option.IntOption):
        return _to_number(key, value, "a whole number", int, option_type)
    if isinstance(option_type, vim.option.FloatOption):
        return _to_number(key, value, "a number", float, option_type)
    if isinstance(option_type, vim.option.ChoiceOption):
        return _to_choice(key, value, option_type)
    return _to_string(key, value, option_type)


def typed_like(key, value, current):
    """``value`` typed like an existing value, for a key that has a value but no definition."""
    if isinstance(current, bool):
        return to_bool(key, value)
    if isinstance(current, VmomiSupport.long):
        return VmomiSupport.long(_to_number(key, value, "a whole number", int, None))
    if isinstance(current, int):
        return _to_number(key, value, "a whole number", int, None)
    if isinstance(current, float):
        return _to_number(key, value, "a number", float, None)
    return _to_string(key, value, None)


def same_value(current, wanted):
    """Equal values of the same kind (so True and 1 differ, as they do for vCenter)."""
    if isinstance(current, bool) or isinstance(wanted, bool):
        return isinstance(current, bool) and isinstance(wanted, bool) and current == wanted
    return current == wanted


def plain(value):
    """A setting value as plain JSON data."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def read_settings(client):
    """``(definitions, values)``: option type and current value per key, in one PropertyCollector call."""
    manager = client.content.setting
    item = client.retrieve_objects([manager], ["supportedOption", "setting"])[0]
    definitions = dict((option.key, option.optionType) for option in item.get("supportedOption") or [])
    values = dict((option.key, option.value) for option in item.get("setting") or [])
    return definitions, values


def wanted_values(settings, definitions, values, allow_new):
    """Each requested value typed; unknown keys fail (listing close matches) unless ``allow_new``."""
    wanted = {}
    unknown = []
    for key, value in settings.items():
        if value is None:
            raise InputError("Setting %s has no value." % key, hint="Give a value; settings cannot be removed.")
        if key in definitions:
            wanted[key] = typed_value(key, value, definitions[key])
        elif key in values:
            wanted[key] = typed_like(key, value, values[key])
        elif allow_new:
            wanted[key] = _to_string(key, value, None)
        else:
            unknown.append(key)
    if unknown:
        known = sorted(set(definitions) | set(values))
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, known, n=5, cutoff=0.6)
            hints.append("%s: %s" % (key, ", ".join(close) if close else "no close match"))
        raise InputError("vCenter has no setting %s." % ", ".join(unknown),
                         hint="Close matches - %s. Set allow_new: true to create new keys (as strings)."
                         % "; ".join(hints))
    return wanted


def apply_settings(client, params, check_mode):
    """The ``vcenter_settings`` module: returns the result dict (``changed``, ``settings``, ``changed_keys``,
    ``diff``)."""
    definitions, values = read_settings(client)
    wanted = wanted_values(params["settings"], definitions, values, params["allow_new"])
    changed_keys = [key for key in wanted if key not in values or not same_value(values[key], wanted[key])]
    before = dict((key, plain(values.get(key))) for key in wanted)
    after = dict(before)
    if changed_keys and not check_mode:
        client.call(client.content.setting.UpdateOptions,
                    changedValue=[vim.option.OptionValue(key=key, value=wanted[key]) for key in changed_keys])
        values = read_settings(client)[1]
        after = dict((key, plain(values.get(key))) for key in wanted)
    else:
        after.update((key, plain(wanted[key])) for key in changed_keys)
    diff_keys = sorted(changed_keys)
    return {
        "changed": bool(changed_keys),
        "settings": {"before": before, "after": after},
        "changed_keys": diff_keys,
        "diff": {"before": dict((key, before[key]) for key in diff_keys),
                 "after": dict((key, after[key]) for key in diff_keys)},
    }
