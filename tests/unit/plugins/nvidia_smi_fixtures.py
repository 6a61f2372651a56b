# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the recorded nvidia-smi outputs are: ``shared/fixtures/nvidia-smi`` beside the collection checkout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest


def _fixtures_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    for start in (here, os.path.realpath(here)):
        path = start
        while os.path.dirname(path) != path:
            candidate = os.path.join(path, "shared", "fixtures", "nvidia-smi")
            if os.path.isdir(candidate):
                return candidate
            path = os.path.dirname(path)
    return None


FIXTURES = _fixtures_dir()


def fixture_path(name):
    if FIXTURES is None:
        pytest.skip("no shared/fixtures/nvidia-smi next to the collection checkout")
    return os.path.join(FIXTURES, name)


def read(name):
    with open(fixture_path(name)) as handle:
        return handle.read()
