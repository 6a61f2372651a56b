# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module run in the worker process answers as a module process would: its result, its own warnings only, an
error it did not handle as a failure, and what it wrote to stderr apart from its result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys

import pytest

try:
    from ansible.module_utils.common.json import Direction, get_module_decoder, get_module_encoder
except ImportError:  # before ansible-core 2.19 the modules run as module processes
    Direction = None

from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _in_process

MODULE = '''
import sys
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec=dict(name=dict(type="str", required=True), secret=dict(type="str", no_log=True),
                                          explode=dict(type="bool", default=False)), supports_check_mode=True)
if module.params["explode"]:
    raise RuntimeError("no answer from %s" % module.params["name"])
sys.stderr.write("a warning of a library\\n")
module.warn("%s warned once" % module.params["name"])
module.exit_json(changed=not module.check_mode, greeting="hello " + module.params["name"],
                 echoed=module.params["secret"])
'''


needs_profiles = pytest.mark.skipif(Direction is None, reason="ansible-core 2.19 or newer runs modules in the worker")


@pytest.fixture
def module_name(tmp_path, monkeypatch):
    (tmp_path / "gpuops_in_process_example.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "gpuops_in_process_example"


def arguments(**args):
    encoder = get_module_encoder(_in_process.PROFILE, Direction.CONTROLLER_TO_MODULE)
    return json.dumps({"ANSIBLE_MODULE_ARGS": args}, cls=encoder).encode("utf-8")


def answer(output):
    """The result as the controller reads a module's output."""
    return json.loads(output, cls=get_module_decoder(_in_process.PROFILE, Direction.MODULE_TO_CONTROLLER))


def warnings_of(result):
    return [warning.event.msg for warning in result.get("warnings") or []]


@needs_profiles
def test_the_result_warnings_and_masking_of_a_module_process(module_name):
    output, errors = _in_process.run_module_main(module_name, arguments(name="esxi-01", secret="s3cret"))
    result = answer(output)
    assert result["greeting"] == "hello esxi-01" and result["changed"] is True
    assert warnings_of(result) == ["esxi-01 warned once"]
    assert "s3cret" not in output and result["echoed"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    assert errors == "a warning of a library\n"


@needs_profiles
def test_check_mode_reaches_the_module(module_name):
    output, _errors = _in_process.run_module_main(module_name, arguments(name="x", _ansible_check_mode=True))
    assert json.loads(output)["changed"] is False


@needs_profiles
def test_a_second_run_in_the_same_process_reports_only_its_own_warnings(module_name):
    _in_process.run_module_main(module_name, arguments(name="first"))
    output, _errors = _in_process.run_module_main(module_name, arguments(name="second"))
    assert warnings_of(answer(output)) == ["second warned once"]


@needs_profiles
def test_an_error_the_module_did_not_handle_is_a_failure_naming_it(module_name):
    output, _errors = _in_process.run_module_main(module_name, arguments(name="esxi-02", explode=True))
    result = json.loads(output)
    assert result["failed"] is True and result["msg"] == "Unexpected error: RuntimeError: no answer from esxi-02"
    assert "RuntimeError" in result["exception"]


@needs_profiles
def test_the_process_is_as_it_was_after_the_run(module_name):
    stdout, stderr, argv = sys.stdout, sys.stderr, list(sys.argv)
    _in_process.run_module_main(module_name, arguments(name="x", explode=True))
    assert (sys.stdout, sys.stderr, sys.argv) == (stdout, stderr, argv)


@pytest.mark.parametrize("interpreter, same", [
    (sys.executable, True),
    (os.path.join(os.path.dirname(sys.executable), ".", os.path.basename(sys.executable)), True),
    (os.path.realpath(sys.executable), os.path.realpath(sys.executable) == os.path.abspath(sys.executable)),
    ("/usr/bin/python3", os.path.abspath(sys.executable) == "/usr/bin/python3"),
    (None, False),
    ("", False),
])
def test_only_the_controllers_own_python_runs_modules_in_the_worker(interpreter, same):
    assert _in_process.same_python(interpreter, sys.executable) is same
