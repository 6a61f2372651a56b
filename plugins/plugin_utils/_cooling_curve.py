# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cooling intent a host needs from its GPUs' temperatures: the curve with hysteresis that the ``bmc_cooling``
role's ``by_temperature`` entry point follows.

The measure is the headroom of the hottest GPU: its slowdown temperature (``GPU Slowdown Temp`` of
``nvidia-smi -q -d temperature``, where the GPU starts throttling itself) less its current temperature, in C.
Each intent above ``default`` has a raise threshold: when the headroom is at or below it, the intent goes up to
that level at once. It comes down from a level only when the headroom is at least that level's threshold plus the
hysteresis (and further down while the same holds for the next level), so a host near a threshold does not switch
back and forth on every run. A floor keeps the intent from
going below a chosen level (``passive_gpu`` for hosts whose passive GPUs always need more airflow).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._cooling import INTENTS

DEFAULT_CURVE = {"passive_gpu": 20, "max_cooling": 10, "hysteresis": 5}


def checked_curve(curve):
    """The curve with defaults filled in; InputError when thresholds do not fall as the intents rise."""
    merged = dict(DEFAULT_CURVE, **(curve or {}))
    unknown = sorted(set(merged) - set(DEFAULT_CURVE))
    if unknown:
        raise InputError("Unknown cooling curve keys %s." % ", ".join(unknown),
                         hint="The curve takes %s (degrees of headroom)." % ", ".join(sorted(DEFAULT_CURVE)))
    for key, value in merged.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise InputError("Cooling curve %s is %r; it takes degrees Celsius, 0 or more." % (key, value))
    if merged["max_cooling"] >= merged["passive_gpu"]:
        raise InputError("Cooling curve max_cooling (%s) must be below passive_gpu (%s): the less headroom, the "
                         "more cooling." % (merged["max_cooling"], merged["passive_gpu"]))
    return merged


def hottest_gpu(gpus):
    """The GPU with the least headroom, among those that report a temperature and a slowdown temperature."""
    readable = [gpu for gpu in gpus or [] if isinstance(gpu.get("temperature_gpu_c"), (int, float))
                and isinstance(gpu.get("temperature_slowdown_c"), (int, float))]
    if not readable:
        return None
    return min(readable, key=lambda gpu: gpu["temperature_slowdown_c"] - gpu["temperature_gpu_c"])


def cooling_intent(gpus, current=None, curve=None, floor="default"):
    """What intent a host with ``gpus`` (nvidia_smi_info's GPU entries: ``temperature_gpu_c``,
    ``temperature_slowdown_c``) needs, given the intent it has now (``current``; None when unknown).

    Returns ``intent``, ``previous``, ``headroom_c`` and the hottest GPU, and a ``reason``.
    """
    curve = checked_curve(curve)
    if floor not in INTENTS:
        raise InputError("Cooling floor %r is not one of %s." % (floor, ", ".join(INTENTS)))
    if current is not None and current not in INTENTS:
        current = None  # settings made by hand: decide from the temperatures alone
    hottest = hottest_gpu(gpus)
    lowest = INTENTS.index(floor)
    if hottest is None:
        intent = INTENTS[max(lowest, INTENTS.index(current))] if current else floor
        return {"intent": intent, "previous": current, "headroom_c": None, "gpu": None,
                "reason": "no GPU reports a temperature and a slowdown temperature: intent kept"}
    headroom = hottest["temperature_slowdown_c"] - hottest["temperature_gpu_c"]
    thresholds = [None] + [curve[name] for name in INTENTS[1:]]
    needed = max([0] + [level for level in range(1, len(INTENTS)) if headroom <= thresholds[level]])
    level = INTENTS.index(current) if current else needed
    if needed >= level:
        level = needed
    else:
        while level > needed and headroom >= thresholds[level] + curve["hysteresis"]:
            level -= 1
    level = max(level, lowest)
    intent = INTENTS[level]
    gpu = dict((key, hottest.get(key)) for key in ("index", "pci_bus_id", "name", "temperature_gpu_c",
                                                   "temperature_slowdown_c"))
    return {"intent": intent, "previous": current, "headroom_c": headroom, "gpu": gpu,
            "reason": _reason(intent, current, needed, level, lowest, headroom, thresholds, curve)}


def _reason(intent, current, needed, level, lowest, headroom, thresholds, curve):
    if level == lowest and needed < lowest:
        return "%s C of headroom; the floor is %s" % (headroom, intent)
    if current and level > needed:
        return ("%s C of headroom is within %s C of the %s threshold (%s C): %s kept" % (
            headroom, curve["hysteresis"], intent, thresholds[level], intent))
    if needed == 0:
        return "%s C of headroom, more than every threshold" % headroom
    return "%s C of headroom is at or below the %s threshold (%s C)" % (headroom, intent, thresholds[needed])
