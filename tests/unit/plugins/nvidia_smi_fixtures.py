# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The recorded nvidia-smi outputs kept in the repository: ``tests/fixtures/nvidia-smi`` (sources in SOURCES.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures",
                                         "nvidia-smi"))


def fixture_path(name):
    """The path of a recorded output; a missing file is an error that names it, never a skip."""
    path = os.path.join(FIXTURES, name)
    if not os.path.isfile(path):
        raise AssertionError("recorded nvidia-smi output %s is missing; restore tests/fixtures/nvidia-smi from git"
                             % path)
    return path


def read(name):
    with open(fixture_path(name)) as handle:
        return handle.read()
