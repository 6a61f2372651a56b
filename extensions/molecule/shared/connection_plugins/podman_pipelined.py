# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""containers.podman.podman with pipelining, for the molecule scenarios of this collection.

The podman connection runs `podman exec` without `-i`, so a module cannot arrive on stdin and every task costs
four exec calls and a copy. With `-i` the module is piped to the interpreter in one call, which makes the
guest scenarios about twice as fast. Only the scenarios under extensions/molecule use it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: podman_pipelined
short_description: The containers.podman.podman connection with pipelining (test scenarios only)
description:
  - Runs commands in a podman container like C(containers.podman.podman), passing C(-i) to C(podman exec) when
    a command has input, so that Ansible can pipeline modules.
author: gpuops maintainers (@gpuops)
options:
  remote_addr:
    description: The name or ID of the container.
    default: inventory_hostname
    vars:
      - name: ansible_host
      - name: inventory_hostname
      - name: ansible_podman_host
  remote_user:
    description: User that runs the commands in the container.
    vars:
      - name: ansible_user
  podman_extra_args:
    description: Extra arguments for podman.
    default: ""
    vars:
      - name: ansible_podman_extra_args
  podman_executable:
    description: The podman executable.
    default: podman
    vars:
      - name: ansible_podman_executable
  pipelining:
    description: Pipeline modules through C(podman exec -i).
    type: boolean
    default: true
    vars:
      - name: ansible_pipelining
"""

import shlex

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.connection import ensure_connect

from ansible_collections.containers.podman.plugins.connection.podman import Connection as PodmanConnection


class Connection(PodmanConnection):
    transport = "podman_pipelined"
    has_pipelining = True

    @ensure_connect
    def exec_command(self, cmd, in_data=None, sudoable=False):
        if in_data is None:
            return super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
        exec_args = ["exec", "-i"] + (["--user", self.user] if self.user else [])
        return self._podman(exec_args, shlex.split(to_native(cmd, errors="surrogate_or_strict")), in_data)
