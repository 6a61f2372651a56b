# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one layer between Ansible and the collection's logic.

Every module's ``main()`` is ``run_module(argument_spec(), run, client=...)``. ``run_module`` builds the
``AnsibleModule``, hands ``run`` the client the module names (connected on first use, so input checks that come
first cost no round trip, and closed at the end), keeps the result's ``diff`` only when Ansible runs with
``--diff``, and is the only place that turns errors into ``fail_json``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError, MissingLibrary


def run_module(argument_spec, run, client=None, **module_kwargs):
    """Call ``run(module)``, or ``run(module, client)`` where ``client(module.params)`` builds the client, and exit.

    ``run`` returns the result dict (``changed``, the module's return values, and ``diff`` where the module reports
    one). A ``GpuopsError`` becomes a failure whose message ends with what the user can do; its details are
    returned alongside.
    """
    module = AnsibleModule(argument_spec=argument_spec, **module_kwargs)
    lazy = LazyClient(client, module.params) if client is not None else None
    try:
        if lazy is None:
            result = run(module)
        else:
            with lazy:
                result = run(module, lazy)
    except MissingLibrary as err:
        module.fail_json(msg=missing_required_lib(err.library), exception=err.import_error)
    except GpuopsError as err:
        warn_requests_sent_again(module, lazy)
        module.fail_json(msg=str(err), **_diff_if_asked(module, _jsonable(err.details)))
    except Exception as err:  # noqa: BLE001 - last resort: keep the traceback for -vvv, the message for the user
        module.fail_json(msg="Unexpected error: %s: %s" % (type(err).__name__, err), exception=traceback.format_exc())
    warn_requests_sent_again(module, lazy)
    module.exit_json(**finish(module, result))


def warn_requests_sent_again(module, lazy):
    """Say how many requests the client sent again after a transient failure: a run that succeeded on a flaky
    network should not hide it."""
    if lazy is not None and lazy.sent_again:
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
