# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Input errors of the logic behind a filter, raised again as filter errors named after the filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from functools import wraps

from ansible.errors import AnsibleFilterError


def filter_errors(*kinds):
    """Decorate a filter so that the errors ``kinds`` become ``AnsibleFilterError("<filter>: <message>")``."""

    def decorate(func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except kinds as err:
                raise AnsibleFilterError("%s: %s" % (func.__name__, err))

        return wrapper

    return decorate
