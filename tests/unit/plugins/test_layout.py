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
    assert re.search(r"^def main\(\):\n    run_module\(argument_spec\(\), run[,)]", source, re.M), path
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
