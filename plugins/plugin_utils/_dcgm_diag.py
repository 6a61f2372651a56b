# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA DCGM's active health check (``dcgmi diag -r <level>``): its output, and the verdict on it.

Both of DCGM's outputs are read (tests/fixtures/dcgm): the JSON of ``dcgmi diag -j`` and, where a DCGM build gives
no JSON, its text table. Their shapes follow NVIDIA's source (github.com/NVIDIA/DCGM, ``dcgmi/Diag.cpp`` and
``nvvs/include/NvvsJsonStrings.h``):

- JSON, DCGM 4.x: ``{"DCGM Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results":
  [{"entity_group", "entity_id", "status", "warnings": [{"warning", "error_id", ...}], "info"}],
  "test_summary": {"status", ...}}]}]}, "metadata": {"version", "Driver Version Detected"}}``.
- JSON, DCGM 3.x: the same tree under ``"DCGM GPU Diagnostic"``, results keyed by ``gpu_id`` (the Deployment rows
  name the GPU only when they carry a message, and keep that message under ``warnings`` inside each entry),
  ``version`` and ``Driver Version Detected`` at the top, ``runtime_error`` when the run itself failed.
- Text: ``| <name, 25 characters> | <result, 46 characters> |`` rows under category rows (``|-----  Hardware
  ---...``). A test's result is ``Pass``/``Fail``/``Warn``/``Skip``/``Not Run``; DCGM 3.x adds ``- All`` or
  ``- GPU: 0`` / ``- GPUs: 1, 2``, DCGM 4.x puts one ``GPU<n>: <result>`` row per GPU under the test. Messages
  follow under ``Error``, ``Warning``, ``Info`` or (4.x) ``Warning: GPU<n>``, cut into rows of 45 characters.

A shape that is none of these is refused with what was seen, never read as a pass.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

STATUSES = ("Pass", "Fail", "Warn", "Skip", "Not Run")
# Worst first: a test's result over its GPUs, and the run's over its tests.
SEVERITY = ("Fail", "Warn", "Pass", "Skip", "Not Run")
JSON_ROOTS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
# DCGM's text table (dcgmi/Diag.cpp DIAG_DATA): the name cell, then the result cell; messages are cut every 45
# characters (DATA_INFO_TAG_LEN) and each piece starts at the result cell.
NAME_CELL = slice(2, 27)
RESULT_CELL = slice(30, 76)
MESSAGE_PIECE = slice(30, 75)
_ROW = re.compile(r"^\| .{25} \| .{46} \|$")
_CATEGORY = re.compile(r"^[|+]-----  (\w+)  -+\+-+[+|]$")
_BORDER = re.compile(r"^\+[-=]+\+[-=]+\+$")
_RESULT = re.compile(r"^(Pass|Fail|Warn|Skip|Not Run)(?: - (All|GPUs?: ([\d, ]+)))?$")
_ENTITY_RESULT = re.compile(r"^GPU(\d+): (Pass|Fail|Warn|Skip|Not Run)$")
_MESSAGE_NAME = re.compile(r"^(Error|Warning|Info)(?:: GPU(\d+))?$")
_GPU_IN_MESSAGE = re.compile(r"\bGPU ?(\d+)\b")
# Where DCGM 3.x joined two messages into one row: after a full stop, before a capital.
_JOINED = re.compile(r"(?<=\.), (?=[A-Z])")
HEADER = "| Diagnostic                | Result                                         |"


def parse_diag(text):
    """``dcgmi diag`` output, JSON or text, as ``{"format", "version", "driver_version", "tests": [{"name",
    "category", "status", "gpus": {"<id>": status}, "messages": [{"kind", "gpus", "text"}]}]}``. ``gpus`` is empty
    where DCGM gives one result for all GPUs (3.x's Deployment rows); a message's ``gpus`` are the GPU its row or
    entry names, else those its words name (``GPU 0``). Raises InputError on anything else."""
    text = text or ""
    start = text.find("{")
    if start >= 0 and text.lstrip().startswith("{"):
        return _parse_json(text[start:text.rfind("}") + 1])
    if HEADER in text:
        return _parse_text(text)
    raise InputError("dcgmi diag printed neither its JSON nor its result table: %s" % _tail(text),
                     hint="Run it by hand (dcgmi diag -r 1) to see why; a host engine that cannot be reached or "
                          "started says so there.")


def _parse_json(text):
    try:
        document = json.loads(text)
    except ValueError as error:
        raise InputError("dcgmi diag -j printed JSON that does not parse (%s): %s" % (error, _tail(text)))
    root_key = next((key for key in JSON_ROOTS if isinstance(document, dict) and key in document), None)
    if root_key is None:
        raise InputError("dcgmi diag -j printed JSON without %s: keys %s" % (
            " or ".join('"%s"' % key for key in JSON_ROOTS),
            sorted(document) if isinstance(document, dict) else type(document).__name__))
    root = document[root_key] or {}
    if root.get("runtime_error"):
        raise InputError("DCGM could not run its diagnostic: %s" % root["runtime_error"],
                         hint="That is DCGM's own message; fix what it names and run the check again.")
    metadata = document.get("metadata") or {}
    tests = []
    for category in root.get("test_categories") or []:
        for test in category.get("tests") or []:
            tests.append(_json_test(test, category.get("category")))
    if not tests:
        raise InputError("dcgmi diag -j ran no test: %s" % _tail(text))
    return {"format": "json", "tests": tests,
            "version": metadata.get("version") or document.get("version") or root.get("version"),
            "driver_version": metadata.get("Driver Version Detected") or document.get("Driver Version Detected")}


def _json_test(test, category):
    name = test.get("name")
    if not name:
        raise InputError("dcgmi diag -j printed a test without a name in category %s" % category)
    gpus, messages = {}, []
    for result in test.get("results") or []:
        gpu = _json_gpu(result)
        status = _status(result.get("status"), name)
        if gpu is not None:
            gpus[gpu] = status
        for warning in result.get("warnings") or []:
            words = warning.get("warning") or warning.get("warnings") if isinstance(warning, dict) else warning
            if words:
                messages.append(_message("Warning", gpu, words, warning))
    summary = test.get("test_summary") or {}
    seen = set(message["text"] for message in messages)
    for warning in summary.get("warnings") or []:
        words = warning.get("warning") if isinstance(warning, dict) else warning
        if words and words not in seen:
            messages.append(_message("Warning", None, words, warning))
    if summary.get("status"):
        status = _status(summary["status"], name)
    elif test.get("results"):
        status = _worst(_status(result.get("status"), name) for result in test["results"])
    else:
        raise InputError("dcgmi diag -j printed test %s without results" % name)
    return {"name": name, "category": category, "status": status, "gpus": gpus, "messages": messages}


def _json_gpu(result):
    if result.get("entity_group", "GPU") != "GPU":
        return None
    for key in ("entity_id", "gpu_id", "gpu_ids"):
        if result.get(key) not in (None, ""):
            return str(result[key])
    return None


def _message(kind, gpu, words, entry=None):
    gpus = [gpu] if gpu is not None else sorted(set(_GPU_IN_MESSAGE.findall(words)), key=int)
    message = {"kind": kind, "gpus": gpus, "text": words.strip()}
    if isinstance(entry, dict) and entry.get("error_id") is not None:
        message["error_id"] = entry["error_id"]
    return message


def _parse_text(text):
    tests, metadata, category, test, message = [], {}, None, None, None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line == HEADER or _BORDER.match(line) or not line.startswith(("|", "+")):
            continue
        heading = _CATEGORY.match(line)
        if heading:
            category, message = heading.group(1), _close(message, test)
            continue
        if not _ROW.match(line):
            raise InputError("dcgmi diag printed a table row of an unknown shape (line %d): %s" % (number, line))
        name, cell = line[NAME_CELL].strip(), line[RESULT_CELL].strip()
        if category == "Metadata":
            metadata[name] = cell
            continue
        entity = _ENTITY_RESULT.match(cell) if not name else None
        result = _RESULT.match(cell) if not name else None
        if message and not name and not entity and not result:
            message["pieces"].append(line[MESSAGE_PIECE])
            continue
        message = _close(message, test)
        kind = _MESSAGE_NAME.match(name)
        if kind:
            if test is None:
                raise InputError("dcgmi diag printed a message before any test (line %d): %s" % (number, line))
            message = {"kind": kind.group(1), "gpu": kind.group(2), "pieces": [line[MESSAGE_PIECE]]}
        elif entity and test is not None:
            test["gpus"][entity.group(1)] = entity.group(2)
        elif result and test is not None:
            _gpu_list(test, result)
        elif name and _RESULT.match(cell):
            test = {"name": name, "category": category, "status": _RESULT.match(cell).group(1), "gpus": {},
                    "messages": []}
            _gpu_list(test, _RESULT.match(cell))
            tests.append(test)
        elif not name and test is not None:
            # A line of its own under a test (3.x prints the EUD's return code so); not a result.
            continue
        else:
            raise InputError("dcgmi diag printed a table row it does not explain (line %d): %s" % (number, line))
    _close(message, test)
    if not tests:
        raise InputError("dcgmi diag printed its table without any test: %s" % _tail(text))
    return {"format": "text", "tests": tests, "version": metadata.get("DCGM Version"),
            "driver_version": metadata.get("Driver Version Detected")}


def _gpu_list(test, result):
    """3.x's ``Pass - All`` / ``Fail - GPUs: 0, 2`` on a test row or the row under it."""
    status, scope, ids = result.group(1), result.group(2), result.group(3)
    if ids:
        for gpu in re.findall(r"\d+", ids):
            test["gpus"][gpu] = status
        test["status"] = _worst(test["gpus"].values())
    elif scope == "All":
        test["all"] = status


def _close(message, test):
    """A message's rows joined again. DCGM 3.x puts several GPUs' messages in one, joined by ``, ``: each sentence
    run that starts a new message becomes a message of its own, so that each names its GPU."""
    if message and test is not None:
        words = "".join(message["pieces"]).strip()
        for part in _JOINED.split(words):
            test["messages"].append(_message(message["kind"], message["gpu"], part))
    return None


def _status(word, test):
    if word not in STATUSES:
        raise InputError("dcgmi diag gave test %s the result %r, none of %s" % (test, word, ", ".join(STATUSES)))
    return word


def _worst(statuses):
    statuses = list(statuses)
    return next((status for status in SEVERITY if status in statuses), "Not Run")


def _tail(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " / ".join(lines[-3:])[-400:] or "(nothing)"


def failures(parsed):
    """Each GPU and test DCGM failed or warned about, with DCGM's words: ``[{"gpu", "test", "status",
    "message"}]``; ``gpu`` is None where DCGM names no GPU (a test that failed as a whole)."""
    found = []
    for test in parsed["tests"]:
        bad = dict((gpu, status) for gpu, status in sorted(test["gpus"].items(), key=lambda item: int(item[0]))
                   if status in ("Fail", "Warn"))
        if not bad and test["status"] in ("Fail", "Warn"):
            named = sorted(set(gpu for message in test["messages"] for gpu in message["gpus"]), key=int)
            bad = dict((gpu, test["status"]) for gpu in named) or {None: test["status"]}
        for gpu, status in bad.items():
            words = [message["text"] for message in test["messages"]
                     if message["kind"] != "Info" and (gpu is None or gpu in message["gpus"] or not message["gpus"])]
            found.append({"gpu": gpu, "test": test["name"], "status": status,
                          "message": " | ".join(words) or "DCGM gave no message"})
    return found


def _gpu_label(gpu, bus_ids):
    if gpu is None:
        return "all GPUs"
    bus = (bus_ids or {}).get(str(gpu))
    return "GPU %s (%s)" % (gpu, bus) if bus else "GPU %s" % gpu


def _grouped(items, verb, bus_ids):
    """One line per GPU and DCGM message, naming every test that gave it: DCGM repeats a message per test."""
    groups = []
    for item in items:
        key = (item["gpu"], item["message"].rstrip("."))
        group = next((group for group in groups if group[0] == key), None)
        if group is None:
            groups.append((key, [item["test"]]))
        else:
            group[1].append(item["test"])
    return "; ".join("%s %s %s: %s" % (_gpu_label(gpu, bus_ids), verb, ", ".join(tests), words)
                     for (gpu, words), tests in groups)


def dcgm_check(outcome, level, dcgmi="dcgmi", gpus=None, whole_gpus=True):
    """The verdict on one ``dcgmi diag -r <level>`` run, from its ``command_batch`` outcome (``rc``, ``stdout``,
    ``msg``): ``ok`` when every test passed or was skipped on every GPU, ``warning`` on DCGM's warnings or when it
    skipped every test, ``failed`` when a test failed, naming each GPU (by nvidia-smi's bus id where ``gpus``, the
    driver read's GPUs, give it), the test and DCGM's own message, and what to do. A run that gave no result (no
    dcgmi, no host engine, output of another shape) fails with what dcgmi said. On GPUs the machine does not own
    (``whole_gpus`` false: a vGPU guest) the check fails without a run: DCGM supports bare metal and full passthrough
    only ("Bare metal and virtualized (full passthrough only)", DCGM Getting Started, Supported Platforms)."""
    level = int(level)
    if not level:
        return {"status": "skipped", "message": "not checked (gpu_validate_dcgm_level is 0)", "level": 0}
    if not whole_gpus:
        return {"status": "failed", "level": level, "message": (
            "not run: gpu_validate_dcgm_level %d asks for DCGM's diagnostic, which runs only on whole GPUs (passthrough "
            "guests, bare-metal servers in gpu_servers), not on a vGPU; set gpu_validate_dcgm_level to 0 here" % level)}
    if not outcome or outcome.get("skipped"):
        return {"status": "skipped", "message": (outcome or {}).get("msg") or "no working driver", "level": level}
    stdout = outcome.get("stdout") or ""
    if not stdout.strip() and ("No such file" in (outcome.get("msg") or "") or outcome.get("rc") == 127):
        return {"status": "failed", "level": level, "message": (
            "%s is not installed: install DCGM (the gpuops.vgpu.dcgm role, or NVIDIA's datacenter-gpu-manager-4-cuda"
            "<CUDA major> package) or set gpu_validate_dcgm_dcgmi" % dcgmi)}
    try:
        parsed = parse_diag(stdout)
    except InputError as error:
        return {"status": "failed", "level": level, "message": "dcgmi diag -r %d gave no result (rc %s): %s" % (
            level, outcome.get("rc"), error)}
    bus_ids = dict((str(gpu.get("index")), gpu.get("pci_bus_id")) for gpu in gpus or [] if gpu.get("index") is not None)
    found = failures(parsed)
    details = {"level": level, "format": parsed["format"], "version": parsed["version"],
               "driver_version": parsed["driver_version"], "failures": found,
               "tests": dict((test["name"], {"status": test["status"], "gpus": test["gpus"]}) for test in parsed["tests"])}
    about = "DCGM %s level %d" % (parsed["version"] or "(version not shown)", level)
    failed = [item for item in found if item["status"] == "Fail"]
    warned = [item for item in found if item["status"] == "Warn"]
    if failed:
        gpus_failed = set(item["gpu"] for item in failed)
        return dict(details, status="failed", message="%s: %s. Take %s out of service, act on DCGM's message, "
                    "then run dcgmi diag -r %d -i <GPU> on it again; replace a GPU that fails again" % (
                        about, _grouped(failed, "failed", bus_ids), "these GPUs" if len(gpus_failed) > 1
                        else "all GPUs" if None in gpus_failed else "the GPU", level))
    if warned:
        return dict(details, status="warning", message="%s: %s" % (about, _grouped(warned, "warned in", bus_ids)))
    ran = [test["name"] for test in parsed["tests"] if test["status"] == "Pass"]
    skipped = [test["name"] for test in parsed["tests"] if test["status"] in ("Skip", "Not Run")]
    if not ran:
        return dict(details, status="warning", message="%s skipped every test (%s): nothing was checked; DCGM's "
                    "own reasons are in dcgmi diag -r %d -v" % (about, ", ".join(skipped), level))
    message = "%s: %s pass" % (about, ", ".join(ran))
    if skipped:
        message += "; skipped: %s" % ", ".join(skipped)
    return dict(details, status="ok", message=message)
