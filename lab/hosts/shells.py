# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab ESXi hosts' SSH shells: one OpenSSH sshd per host that the topology gives a ``shell: {port: N}``.

Each sshd listens on 127.0.0.1, takes root with the lab's key only (ESXi offers key or password login for root;
the lab offers the key), and sets PATH so that ``nvidia-smi`` is the vGPU manager stand-in for that host
(lab/hosts/nvidia_smi.py) for interactive logins, ``ssh host cmd``, Ansible's ``raw`` and its modules alike.
Everything lives under ``<state dir>/hosts``: host keys, the client key pair (``id_ed25519``), the known_hosts file
with every host's key, one folder per host with its sshd_config, pid file and bin/nvidia-smi.
"""

import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "nvidia_smi.py")
SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = "ssh-keygen"
# Debian's sshd wants its privilege separation directory (made by its package's service unit otherwise).
PRIVSEP_DIR = "/run/sshd"
START_TIMEOUT = 20
# The venv's Python runs the stand-in and Ansible's modules (ESXi 8 has /bin/python 3.8+).
PYTHON = sys.executable

WRAPPER = """#!/bin/sh
# nvidia-smi of the lab host {name}: the vGPU manager stand-in answering from the lab's state.
GPUOPS_LAB_URL='{url}' GPUOPS_LAB_HOST='{name}' GPUOPS_LAB_CAFILE='{cafile}' GPUOPS_LAB_CATALOG='{catalog}' \\
exec '{python}' '{standin}' "$@"
"""

CONFIG = """# sshd of the lab ESXi host {name} (written by lab/hosts/shells.py)
Port {port}
ListenAddress 127.0.0.1
HostKey {folder}/ssh_host_ed25519_key
PidFile {folder}/sshd.pid
AuthorizedKeysFile {hosts_dir}/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# The state dir sits in a checkout whose parents other users may write to: the lab's own files are checked by hand.
StrictModes no
PermitUserEnvironment no
SetEnv PATH={folder}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
Subsystem sftp internal-sftp
LogLevel INFO
"""


def topology_hosts(topology):
    """Every host of a topology: clustered and standalone, datacenter by datacenter."""
    for datacenter in topology["datacenters"]:
        hosts = list(datacenter.get("hosts") or [])
        for cluster in datacenter.get("clusters") or []:
            hosts.extend(cluster.get("hosts") or [])
        for host in hosts:
            yield host


def shell_hosts(topology):
    return (host for host in topology_hosts(topology) if host.get("shell"))


def _keygen(path, comment):
    if not os.path.exists(path):
        subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path], check=True,
                       stdout=subprocess.DEVNULL)
    with open(path + ".pub") as handle:
        return handle.read().split()[:2]


def _answering(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            return conn.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def start_shells(topology, state_dir, lab_url, cafile, catalog, log_dir):
    """Start one sshd per host with a shell; returns ``{name: {pid, port, folder}}`` and the files clients need."""
    hosts_dir = os.path.join(state_dir, "hosts")
    os.makedirs(hosts_dir, mode=0o700, exist_ok=True)
    os.makedirs(PRIVSEP_DIR, mode=0o755, exist_ok=True)
    client_key = os.path.join(hosts_dir, "id_ed25519")
    kind, blob = _keygen(client_key, "gpuops-lab")
    with open(os.path.join(hosts_dir, "authorized_keys"), "w") as handle:
        handle.write("%s %s gpuops-lab\n" % (kind, blob))
    known, started = [], {}
    for host in shell_hosts(topology):
        name, port = host["name"], host["shell"]["port"]
        folder = os.path.join(hosts_dir, name)
        os.makedirs(os.path.join(folder, "bin"), exist_ok=True)
        key_kind, key_blob = _keygen(os.path.join(folder, "ssh_host_ed25519_key"), "root@" + name)
        known.append("[127.0.0.1]:%d %s %s\n" % (port, key_kind, key_blob))
        wrapper = os.path.join(folder, "bin", "nvidia-smi")
        with open(wrapper, "w") as handle:
            handle.write(WRAPPER.format(name=name, url=lab_url, cafile=cafile, catalog=catalog, python=PYTHON,
                                        standin=STANDIN))
        os.chmod(wrapper, 0o755)
        config = os.path.join(folder, "sshd_config")
        with open(config, "w") as handle:
            handle.write(CONFIG.format(name=name, port=port, folder=folder, hosts_dir=hosts_dir))
        log = open(os.path.join(log_dir, "sshd-%s.log" % name), "ab")
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", config], stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        started[name] = {"pid": proc.pid, "port": port, "folder": folder}
    with open(os.path.join(hosts_dir, "known_hosts"), "w") as handle:
        handle.writelines(known)
    deadline = time.monotonic() + START_TIMEOUT
    for name, shell in started.items():
        while not _answering(shell["port"]):
            if time.monotonic() > deadline:
                for other in started.values():
                    try:
                        os.killpg(other["pid"], signal.SIGTERM)
                    except OSError:
                        pass
                raise RuntimeError("The lab host shell of %s (sshd on port %d) did not start; see %s." % (
                    name, shell["port"], os.path.join(log_dir, "sshd-%s.log" % name)))
            time.sleep(0.1)
    return started, {"private_key": client_key, "known_hosts": os.path.join(hosts_dir, "known_hosts"),
                     "python": PYTHON}


def descendants(pid):
    """Every process below ``pid`` (sshd's per-connection children start their own sessions, so a process group
    signal does not reach them)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found
