# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed errors raised by the collection's clients and logic.

Clients and logic raise one of these and never end the module themselves; ``_module_base.run_module`` turns them
into the module's failure, with a message that names the object, the value and what the user can do about it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from contextlib import contextmanager


class GpuopsError(Exception):
    """Base error. ``hint`` tells the user what to do; ``details`` are returned with the failure."""

    def __init__(self, message, hint=None, **details):
        super(GpuopsError, self).__init__(message)
        self.message = message
        self.hint = hint
        self.details = details

    def __str__(self):
        if self.hint:
            return "%s %s" % (self.message, self.hint)
        return self.message


class InputError(GpuopsError):
    """The user's input cannot be accepted. Raised before anything changes."""


class ConnectionFailure(GpuopsError):
    """The API endpoint could not be reached or refused the credentials."""


class ChangeInDoubt(ConnectionFailure):
    """A change was sent, and the connection dropped before its answer: it may or may not have been applied."""


class NotFound(GpuopsError):
    """A named object does not exist."""


class ApiError(GpuopsError):
    """The API answered with a fault."""


class TaskFailed(GpuopsError):
    """A server-side task ended in error."""


class TimeoutExpired(GpuopsError):
    """Waiting for something took longer than allowed."""


class MissingLibrary(GpuopsError):
    """A Python library a client needs is not installed where the module runs."""

    def __init__(self, library, import_error):
        super(MissingLibrary, self).__init__("The Python library %s is required." % library, library=library)
        self.library = library
        self.import_error = import_error


class Busy(GpuopsError):
    """Another run holds the object (a cluster lock) and did not let go in the time allowed."""


@contextmanager
def keeping_warnings(warnings):
    """Logic that collects ``warnings`` for its result before a step that may fail: an error that leaves the block
    carries them (``err.warnings``), and ``run_module`` warns them with the failure."""
    try:
        yield warnings
    except Exception as err:
        err.warnings = list(warnings)
        raise
