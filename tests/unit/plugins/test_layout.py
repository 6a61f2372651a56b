# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of the collection that docs/development.md describes, checked on every file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import io
import os
import re
import tokenize

import pytest

PLUGINS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "plugins"))
MODULES = os.path.join(PLUGINS, "modules")
MODULE_UTILS = os.path.join(PLUGINS, "module_utils")
MODULE_CODE_LINES = 80
MODULE_UTILS_LINES = 450


def _python_files(folder):
    for base, _dirs, files in os.walk(folder):
        for name in sorted(files):
            if name.endswith(".py") and name != "__init__.py":
                yield os.path.join(base, name)


def _read(path):
    with io.open(path, encoding="utf-8") as handle:
        return handle.read()


def code_lines(source):
    """Lines that hold code: not blank, not comments, not inside a module-level string (the documentation)."""
    tree = ast.parse(source)
    doc_lines = set()
    for node in tree.body:
        value = getattr(node, "value", None)
        if isinstance(node, (ast.Assign, ast.Expr)) and isinstance(value, ast.Constant) and isinstance(value.value, str):
            doc_lines.update(range(node.lineno, node.end_lineno + 1))
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                          tokenize.ENDMARKER):
            continue
        lines.update(line for line in range(token.start[0], token.end[0] + 1) if line not in doc_lines)
    return len(lines)


def test_code_lines_skip_documentation_and_comments():
    source = 'DOCUMENTATION = r"""\none\ntwo\n"""\n\n# a comment\n\ndef main():\n    return dict(\n        a=1)\n'
    assert code_lines(source) == 3


@pytest.mark.parametrize("path", sorted(_python_files(MODULES)), ids=os.path.basename)
def test_modules_are_thin_and_share_one_skeleton(path):
    source = _read(path)
    assert code_lines(source) <= MODULE_CODE_LINES, "%s has %d lines of code" % (path, code_lines(source))
    assert "def argument_spec():" in source
    assert re.search(r"^def main\(\):\n    run_module\(argument_spec\(\), \w+[,)]", source, re.M), path
    assert "fail_json" not in source and "AnsibleModule(" not in source


@pytest.mark.parametrize("path", sorted(_python_files(MODULE_UTILS)), ids=lambda p: os.path.relpath(p, MODULE_UTILS))
def test_module_utils_files_stay_small_and_leave_failing_to_the_module_base(path):
    source = _read(path)
    assert len(source.splitlines()) <= MODULE_UTILS_LINES, path
    if os.path.basename(path) != "_module_base.py":
        assert "fail_json(" not in source, path
    if os.sep + "clients" + os.sep in path:
        assert "AnsibleModule" not in source and "ansible.module_utils.basic" not in source, path


PREFIX = "ansible_collections.gpuops.vgpu.plugins."


def _imported(path):
    """The collection's Python files that ``path`` imports, at any depth of its code, as paths."""
    found = set()
    for node in ast.walk(ast.parse(_read(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PREFIX):
            package = os.path.join(PLUGINS, *node.module[len(PREFIX):].split("."))
            for alias in node.names:
                submodule = os.path.join(package, alias.name + ".py")
                found.add(submodule if os.path.exists(submodule) else package + ".py")
        elif isinstance(node, ast.Import):
            found.update(os.path.join(PLUGINS, *alias.name[len(PREFIX):].split(".")) + ".py"
                         for alias in node.names if alias.name.startswith(PREFIX))
    return found


def test_module_utils_hold_only_what_modules_run():
    """module_utils is what Ansible sends with a module to the host it runs on, under that host's Python. Code that
    only the controller runs (filters, tests, action, lookup and inventory plugins) lives in plugin_utils."""
    reached, todo = set(), list(_python_files(MODULES))
    while todo:
        path = todo.pop()
        if path not in reached and os.path.exists(path):
            reached.add(path)
            todo.extend(_imported(path))
    unreached = sorted(os.path.relpath(path, PLUGINS) for path in _python_files(MODULE_UTILS) if path not in reached)
    assert not unreached, "no module imports these; move them to plugins/plugin_utils: %s" % ", ".join(unreached)


def test_the_import_reader_sees_imports_inside_functions(tmp_path):
    path = tmp_path / "example.py"
    path.write_text("def f():\n    from %smodule_utils import _errors\n" % PREFIX)
    assert _imported(str(path)) == {os.path.join(MODULE_UTILS, "_errors.py")}


HANDOFF = ["client", "params", "check_mode"]


def handoff_problems(source):
    """What keeps a module's ``main()`` from the one handoff: ``run_module(argument_spec(), <logic>, ...)``, where
    ``<logic>`` is imported from module_utils, takes ``(client, params, check_mode)`` and returns a dict (never a
    tuple); the client is ``Host``, a client class's ``from_params`` or none."""
    tree = ast.parse(source)
    functions = dict((node.name, node) for node in tree.body if isinstance(node, ast.FunctionDef))
    if "run" in functions:
        return ["the module defines run(); main() hands the logic to run_module itself"]
    main = functions.get("main")
    call = main.body[0].value if main and len(main.body) == 1 and isinstance(main.body[0], ast.Expr) else None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "run_module" and len(call.args) == 2
            and isinstance(call.args[1], ast.Name)):
        return ["main() is not run_module(argument_spec(), <logic>, ...)"]
    problems = []
    client = [keyword.value for keyword in call.keywords if keyword.arg == "client"]
    if client and not (getattr(client[0], "id", None) == "Host" or getattr(client[0], "attr", None) == "from_params"):
        problems.append("client= is neither Host nor a client's from_params")
    logic = call.args[1].id
    imported = [node.module for node in tree.body if isinstance(node, ast.ImportFrom)
                and any(alias.name == logic and alias.asname is None for alias in node.names)]
    if not imported or not imported[0].startswith(PREFIX + "module_utils."):
        return problems + ["%s is not imported from module_utils" % logic]
    path = os.path.join(PLUGINS, *imported[0][len(PREFIX):].split(".")) + ".py"
    definition = [node for node in ast.parse(_read(path)).body
                  if isinstance(node, ast.FunctionDef) and node.name == logic]
    if not definition:
        return problems + ["%s is not a function of %s" % (logic, os.path.relpath(path, PLUGINS))]
    arguments = definition[0].args
    if ([arg.arg for arg in arguments.args] != HANDOFF or arguments.defaults or arguments.vararg or arguments.kwarg
            or arguments.kwonlyargs):
        problems.append("%s takes (%s), not (%s)" % (logic, ", ".join(arg.arg for arg in arguments.args),
                                                     ", ".join(HANDOFF)))
    if any(isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) for node in _own_nodes(definition[0])):
        problems.append("%s returns a tuple, not the result dict" % logic)
    return problems


def _own_nodes(function):
    """The nodes of ``function``'s own body, not those of the functions and classes it defines."""
    todo = list(function.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


@pytest.mark.parametrize("path", sorted(_python_files(MODULES)), ids=os.path.basename)
def test_every_module_hands_its_logic_client_params_and_check_mode(path):
    assert handoff_problems(_read(path)) == [], path


def test_the_handoff_check_fails_a_module_that_hands_off_differently():
    old = ("from %smodule_utils.vcenter._host_passthrough import configure\n\n\n"
           "def run(module, client):\n    return dict(zip(('changed', 'hosts'), configure(client, module.params,"
           " module.check_mode)))\n\n\ndef main():\n    run_module(argument_spec(), run, client=VCenterClient.from_params)\n"
           % PREFIX)
    assert handoff_problems(old) == ["the module defines run(); main() hands the logic to run_module itself"]
    assert handoff_problems(old.replace("def run(", "def other(").replace(", run,", ", configure,")) == []
    assert "plan takes (inventory, requests, mode, assignment_policy, symmetric, headroom, respect_current), not " \
           "(client, params, check_mode)" in handoff_problems(
               "from %smodule_utils.planner._planner import plan\n\n\ndef main():\n"
               "    run_module(argument_spec(), plan)\n" % PREFIX)
    assert handoff_problems("def main():\n    run_module(argument_spec(), read, client=make_client)\n") == [
        "client= is neither Host nor a client's from_params", "read is not imported from module_utils"]


def test_a_logic_that_returns_a_tuple_is_caught(tmp_path):
    function = ast.parse("def configure(client, params, check_mode):\n    def inner():\n        return 1, 2\n"
                         "    if check_mode:\n        return True, []\n    return {}\n").body[0]
    assert any(isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) for node in _own_nodes(function))
    function.body[1].body[0].value = ast.Dict(keys=[], values=[])
    assert not any(isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple)
                   for node in _own_nodes(function))


@pytest.mark.parametrize("path", sorted(_python_files(MODULE_UTILS)), ids=lambda p: os.path.relpath(p, MODULE_UTILS))
def test_logic_takes_no_warn_callable(path):
    """Warnings go into the result's ``warnings`` (``keeping_warnings`` when a failure may follow), not to a
    callable handed down from the module."""
    taking = [node.name for node in ast.walk(ast.parse(_read(path)))
              if isinstance(node, ast.FunctionDef) and "warn" in [arg.arg for arg in node.args.args]]
    assert not taking, "%s: %s" % (path, ", ".join(taking))


# Rules said once. The license rule is held by test_grid_license_plan.py (test_the_role_restates_no_license_rule),
# which clusters the site acts on by test_inventory_filters.py (test_the_playbooks_and_roles_take_their_clusters_from_
# site_clusters); which hosts a remediation touches, here.
HOST_DRIVER_TASKS = os.path.join(PLUGINS, "..", "roles", "host_driver", "tasks")


def test_the_host_driver_role_takes_the_remediated_hosts_from_the_plan_and_vlcm_remediate():
    """host_driver asks host_driver_plan what to do and vlcm_remediate which hosts it touches (``pending`` in check
    mode); no task works the hosts out in a Jinja loop or filters them again."""
    texts = dict((name, _read(os.path.join(HOST_DRIVER_TASKS, name)))
                 for name in sorted(os.listdir(HOST_DRIVER_TASKS)) if name.endswith(".yml"))
    assert texts and sum(text.count("gpuops.vgpu.host_driver_plan(") for text in texts.values()) == 1
    assert any(".pending" in text for text in texts.values())
    for name, text in texts.items():
        assert "{% for" not in text and "{%- for" not in text, name
        assert not re.search(r"(select|reject)attr\(['\"](name|host|hostname)", text), name
