# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one layer between Ansible and the collection's logic.

Every module's ``main()`` is ``run_module(argument_spec(), <logic>, client=...)``, and every logic entry point a
module names is ``<logic>(client, params, check_mode)`` returning the result dict, with what the user should be warned
about in its ``warnings`` list. ``run_module`` builds the ``AnsibleModule``, hands the logic the client the module
names (connected on first use, so input checks that come first cost no round trip, and closed at the end; ``Host``
for the modules that run commands where they run; None without ``client``), warns the result's ``warnings``, keeps
its ``diff`` only when Ansible runs with ``--diff``, and is the only place that turns errors into ``fail_json``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError, MissingLibrary


def run_module(argument_spec, logic, client=None, **module_kwargs):
    """Call ``logic(client, module.params, module.check_mode)`` and exit. ``client`` is ``Host``, a factory that
    ``client(module.params)`` builds the client with (``LazyClient``), or None for logic that needs none.

    ``logic`` returns the result dict (``changed``, the module's return values, ``diff`` where the module reports
    one, and ``warnings``). A ``GpuopsError`` becomes a failure whose message ends with what the user can do; its
    details are returned alongside. Warnings an error carries (``keeping_warnings``) are warned with the failure.
    """
    module = AnsibleModule(argument_spec=argument_spec, **module_kwargs)
    if client is Host:
        lazy = Host(module)
    else:
        lazy = LazyClient(client, module.params) if client is not None else None
    try:
        if lazy is None:
            result = logic(None, module.params, module.check_mode)
        else:
            with lazy:
                result = logic(lazy, module.params, module.check_mode)
    except MissingLibrary as err:
        warn_all(module, getattr(err, "warnings", []))
        module.fail_json(msg=missing_required_lib(err.library), exception=err.import_error)
    except GpuopsError as err:
        warn_all(module, getattr(err, "warnings", []))
        warn_requests_sent_again(module, lazy)
        module.fail_json(msg=str(err), **_diff_if_asked(module, _jsonable(err.details)))
    except Exception as err:  # noqa: BLE001 - last resort: keep the traceback for -vvv, the message for the user
        warn_all(module, getattr(err, "warnings", []))
        module.fail_json(msg="Unexpected error: %s: %s" % (type(err).__name__, err), exception=traceback.format_exc())
    result = dict(result)
    warn_all(module, result.pop("warnings", []))
    warn_requests_sent_again(module, lazy)
    module.exit_json(**finish(module, result))


def warn_all(module, warnings):
    for warning in warnings:
        module.warn(warning)


def warn_requests_sent_again(module, lazy):
    """Say how many requests the client sent again after a transient failure: a run that succeeded on a flaky
    network should not hide it."""
    if lazy is not None and getattr(lazy, "sent_again", 0):
        module.warn("%d request(s) to %s were sent again after a lost connection or a busy answer (503/429)."
                    % (lazy.sent_again, lazy.endpoint_name or "the API"))


class LazyClient(object):
    """Stands for the client ``factory(params)`` builds, building and entering it at its first use."""

    def __init__(self, factory, params):
        self._factory = factory
        self._params = params
        self._client = None
        # Kept when the client closes: how many requests it sent again (clients count them in ``retried``).
        self.sent_again = 0
        self.endpoint_name = None

    def __getattr__(self, name):
        if self._client is None:
            client = self._factory(self._params)
            self._client = client.__enter__() or client
        return getattr(self._client, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        if self._client is not None:
            self.sent_again += getattr(self._client, "retried", 0)
            self.endpoint_name = getattr(self._client, "endpoint", None) or getattr(self._client, "baseuri", None)
            self._client.__exit__(*exc_info)
            self._client = None


class Host(object):
    """The client of the modules that run commands on the host they run on: the module's ``run_command`` and
    ``get_bin_path``."""

    def __init__(self, module):
        self._module = module

    def run_command(self, *args, **kwargs):
        return self._module.run_command(*args, **kwargs)

    def get_bin_path(self, *args, **kwargs):
        return self._module.get_bin_path(*args, **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None


def finish(module, result):
    """``result`` with ``changed`` always set and ``diff`` kept only with ``--diff``."""
    result = _diff_if_asked(module, dict(result))
    result.setdefault("changed", False)
    return result


def _diff_if_asked(module, result):
    diff = result.pop("diff", None)
    if module._diff and diff is not None:
        result["diff"] = diff
    return result


def _jsonable(details):
    return dict((key, value) for key, value in details.items() if value is not None)
