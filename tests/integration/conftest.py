# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Integration harness: the lab, and real ansible-playbook runs against it.

Fixtures:
- ``lab`` (per test): the lab of the default topology at its start. Each pytest-xdist worker starts one for the
  session and resets it before every test (``labctl.py reset``: the vCenter builds its topology again, every BMC
  goes back to its factory state), so any test runs alone or in any order.
- ``labs`` (per session): ``labs(topology, extra)`` gives the lab of another topology the same way, for test files
  that override ``lab``; a worker runs one lab at a time and restarts it only to change the topology.
- ``run_tasks``: runs a list of tasks in a play on localhost with the collection and the vCenter connection set
  once through ``module_defaults``; returns the per-task results.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import importlib.util
import json
import os
import ssl
import subprocess
import sys
import urllib.request

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABCTL = os.path.join(ROOT, "lab", "labctl.py")
# The lab's infrastructure only: inventories/lab/job.yml (the guests and the site run's choices) stays out.
INVENTORY_DIR = os.path.join(ROOT, "inventories", "lab")
INVENTORY = os.path.join(INVENTORY_DIR, "hosts.yml")
# LAB_PORT_OFFSET runs the tests' lab on shifted ports with its own state, beside a lab already in use. Each
# pytest-xdist worker shifts by another 1000, so workers run labs side by side.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
PORT_OFFSET = int(os.environ.get("LAB_PORT_OFFSET") or 0) + 1000 * int(_WORKER[2:] or 0)
DEFAULT_STATE_DIR = os.path.join(ROOT, ".tmp", "lab" if not PORT_OFFSET else "lab-%d" % PORT_OFFSET)
DEFAULT_TOPOLOGY = os.path.join(ROOT, "lab", "topologies", "default.yml")


def _load_lab_control():
    spec = importlib.util.spec_from_file_location("gpuops_lab_control", LABCTL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAB_CONTROL = _load_lab_control()
# The labs this worker started: state directory -> (topology, extra options of labctl up).
_STARTED = {}


def _insecure_context():
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _inventory_hosts(path):
    """Every host name an inventory file declares, in any group."""
    with open(path) as handle:
        groups = [yaml.safe_load(handle)]
    names = set()
    while groups:
        group = groups.pop() or {}
        names.update(group.get("hosts") or {})
        groups.extend((group.get("children") or {}).values())
        groups.extend(value for key, value in group.items() if key == "all")
    return names


class Lab:
    """A running lab: its endpoints, credentials, ground truth and counters."""

    def __init__(self, state_dir):
        self.state_dir = state_dir
        with open(os.path.join(state_dir, "services.json")) as handle:
            self.services = json.load(handle)
        with open(os.path.join(INVENTORY_DIR, "group_vars", "all.yml")) as handle:
            self.vcenter_vars = yaml.safe_load(handle)
        with open(os.path.join(INVENTORY_DIR, "group_vars", "bmc_hosts.yml")) as handle:
            bmc_vars = yaml.safe_load(handle)
        self.inventory = INVENTORY
        self.port = self.services["vcenter"]["port"]
        self.base = "https://127.0.0.1:%s" % self.port
        with open(os.path.join(state_dir, "topology.json")) as handle:
            self.topology = json.load(handle)
        self.bmcs = self.services.get("bmc", {}).get("hosts", {})
        self.bmc_credentials = (bmc_vars["bmc_username"], bmc_vars["bmc_password"])
        self.certificate = os.path.join(state_dir, "lab-cert.pem")
        self.shells = self.services.get("shells") or {}
        self.shell_inventory = self._write_shell_inventory()

    def _write_shell_inventory(self):
        """The ESXi hosts' connection to this lab's host shells (its ports, key and known_hosts), layered over
        inventories/lab by run_tasks; hosts without a shell in this lab get a local connection, so nothing goes
        to another lab's shells."""
        shells = self.shells.get("hosts") or {}
        common = "-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes" % self.shells.get("known_hosts")
        hosts = dict((host["name"], {"ansible_connection": "local",
                                     "ansible_python_interpreter": "{{ ansible_playbook_python }}"})
                     for host in LAB_CONTROL.shells.topology_hosts(self.topology))
        hosts.update((name, {"ansible_port": shell["port"], "ansible_ssh_common_args": common,
                             "ansible_ssh_private_key_file": self.shells["private_key"]})
                     for name, shell in shells.items())
        # A topology host outside inventories/lab must not join its servers group (the roles' plays run on it):
        # such a host gets the servers' connection variables in a group of its own.
        with open(self.inventory) as handle:
            servers = yaml.safe_load(handle)["all"]["children"]["servers"]
        named = _inventory_hosts(self.inventory)
        inventory = {"servers": {"hosts": dict((n, v) for n, v in hosts.items() if n in named)}}
        others = dict((n, v) for n, v in hosts.items() if n not in named)
        if others:
            inventory["lab_hosts_outside_the_inventory"] = {"hosts": others, "vars": servers.get("vars") or {}}
        path = os.path.join(self.state_dir, "shells-inventory.yml")
        with open(path, "w") as handle:
            yaml.safe_dump(inventory, handle)
        return path

    @property
    def inventory_args(self):
        """ansible-playbook's -i options for this lab: inventories/lab with this lab's host shells layered over it,
        so that no play reaches the shells of another worker's lab on inventories/lab's default ports."""
        return ["-i", self.inventory, "-i", self.shell_inventory]

    @property
    def connection(self):
        """Module options that connect to this lab's vCenter."""
        return {
            "hostname": "127.0.0.1",
            "port": self.port,
            "username": self.vcenter_vars["vcenter_username"],
            "password": self.vcenter_vars["vcenter_password"],
            "validate_certs": False,
        }

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=_insecure_context(), timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def state(self):
        return self.request("GET", "/lab/state")

    vcenter_state = state

    def stats(self):
        return self.request("GET", "/lab/stats")

    def reset_stats(self):
        self.request("POST", "/lab/stats/reset")

    def reset(self):
        """The whole lab back to its start, without a restart; vCenter sessions end."""
        LAB_CONTROL.reset_lab(self.services)

    def add_fault(self, **fault):
        self.request("POST", "/lab/faults", fault)

    def clear_faults(self):
        self.request("DELETE", "/lab/faults")

    # Ground-truth lookups used by many tests.
    def host(self, name):
        return next(host for host in self.state()["hosts"] if host["name"] == name)

    def vm(self, name):
        return next(vm for vm in self.state()["vms"] if vm["name"] == name)


def labctl(command, state_dir=DEFAULT_STATE_DIR, *args):
    proc = subprocess.run([sys.executable, LABCTL, command, "--state-dir", state_dir] + list(args), cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    if proc.returncode != 0:
        raise AssertionError("labctl %s failed:\n%s" % (command, proc.stdout))


def start_lab(state_dir=DEFAULT_STATE_DIR, topology=DEFAULT_TOPOLOGY, extra=()):
    """A fresh lab: whatever ran in ``state_dir`` is stopped first."""
    labctl("down", state_dir)
    labctl("up", state_dir, "--topology", topology, "--port-offset", str(PORT_OFFSET), *extra)
    _STARTED[state_dir] = (os.path.abspath(topology), tuple(extra))
    return Lab(state_dir)


def _running(state_dir):
    services = LAB_CONTROL.read_services(state_dir)
    return bool(services) and all(LAB_CONTROL.pid_alive(service["pid"]) for service in services.values()
                                  if "pid" in service)


def lab_at_start(topology=DEFAULT_TOPOLOGY, extra=(), state_dir=DEFAULT_STATE_DIR):
    """The lab of ``topology`` at its start: the one this worker runs in ``state_dir`` reset, or a new one."""
    if _STARTED.get(state_dir) == (os.path.abspath(topology), tuple(extra)) and _running(state_dir):
        running = Lab(state_dir)
        running.reset()
        return running
    return start_lab(state_dir, topology, extra)


@contextlib.contextmanager
def lab_servers(lab, state_dir, ssh_port_shift):
    """The default topology's GPU servers as they start in the lab (no driver), their SSH ports moved by
    ``ssh_port_shift`` so that the tests of one file keep clear of another's, with their inventory (the lab's BMCs) in
    ``state_dir``/inventory.yml; removed on the way out."""
    sys.path.insert(0, os.path.join(ROOT, "lab", "servers"))
    import server_inventory  # pylint: disable=import-outside-toplevel

    with open(DEFAULT_TOPOLOGY) as handle:
        specs = [dict(s, ssh_port=s["ssh_port"] + ssh_port_shift) for s in yaml.safe_load(handle)["servers"]]
    os.makedirs(state_dir, exist_ok=True)
    catalog = os.path.join(state_dir, "catalog.json")
    subprocess.run([sys.executable, LAB_CONTROL.EXPORT_CATALOG, catalog], check=True)
    started = LAB_CONTROL.start_servers(specs, state_dir, PORT_OFFSET, catalog)
    try:
        server_inventory.write_inventory(os.path.join(state_dir, "inventory.yml"), started, state_dir, lab.bmcs)
        yield started
    finally:
        LAB_CONTROL.stop_guests([server["container"] for server in started.values()])


@contextlib.contextmanager
def systemd_drop_in(container, unit, text):
    """``text`` as a drop-in of systemd ``unit`` in a lab container while the block runs, systemd reloaded once it is
    written and once it is gone: a test changes how a lab daemon behaves (a delay, a hold) without touching its unit,
    and the unit is as before on the way out."""
    path = "/etc/systemd/system/%s.d/gpuops-test.conf" % unit

    def shell(script, *args):
        done = LAB_CONTROL.podman("exec", container, "sh", "-c", script, "sh", *args, check=False)
        assert done.returncode == 0, done.stdout

    shell('mkdir -p "${1%/*}" && printf "%s" "$2" >"$1" && systemctl daemon-reload', path, text)
    try:
        yield
    finally:
        shell('rm -f "$1" && rmdir --ignore-fail-on-non-empty "${1%/*}" && systemctl daemon-reload', path)


@pytest.fixture(scope="session")
def labs():
    try:
        yield lab_at_start
    finally:
        for state_dir in list(_STARTED):
            labctl("down", state_dir)


@pytest.fixture
def lab(labs):
    return labs()


class PlaybookRun:
    def __init__(self, rc, stdout, stderr, results):
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.results = results

    def result(self, index=-1):
        return self.results[index]

    @property
    def failed(self):
        return [result for result in self.results if result.get("failed")]

    @property
    def module_runs(self):
        """The names of the tasks that ran a module: not skipped, and not an action of the controller's own."""
        return [result["_task"] for result in self.results if not result.get("skipped")
                and (result.get("action") or "").split(".")[-1] not in CONTROLLER_ACTIONS]


# Actions that run on the controller alone, without a module run.
CONTROLLER_ACTIONS = ("set_fact", "debug", "assert", "fail", "include_tasks", "include_role", "validate_argument_spec",
                      "meta")


def _results_from_json(stdout):
    document = json.loads(stdout[stdout.index("{"):])
    results = []
    for play in document.get("plays", []):
        for task in play.get("tasks", []):
            for host_result in task.get("hosts", {}).values():
                host_result = dict(host_result)
                host_result.setdefault("_task", task["task"]["name"])
                results.append(host_result)
    return results


def run_playbook(inventory, playbook, *args):
    """ansible-playbook ``playbook`` on ``inventory`` with the collection and the json callback, outside the lab's
    inventory (containers of a test's own); returns (rc, {host: {task name: result}}, output)."""
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(playbook)]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run(argv + list(args), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    assert "{" in proc.stdout, proc.stdout + proc.stderr
    document = json.loads(proc.stdout[proc.stdout.index("{"):])
    results = {}
    for task in document["plays"][0]["tasks"]:
        for host, result in task["hosts"].items():
            results.setdefault(host, {})[task["task"]["name"].split(" : ")[-1]] = result
    return proc.returncode, results, proc.stdout + proc.stderr


@pytest.fixture
def run_tasks(lab, tmp_path):
    """Run tasks against the lab: ``run_tasks(tasks, check=False, diff=False, extra_vars=None, ...)``."""

    def run(tasks, check=False, diff=False, extra_vars=None, expect_failure=False, verbosity=0,
            callback="ansible.posix.json", module_defaults=None, hosts="localhost", env=None, inventories=(),
            playbook_name="playbook.yml"):
        defaults = {"group/gpuops.vgpu.vcenter": lab.connection}
        defaults.update(module_defaults or {})
        play = [{"name": "integration test", "hosts": hosts, "gather_facts": False,
                 "module_defaults": defaults, "tasks": tasks}]
        playbook = tmp_path / playbook_name  # runs at the same time need files of their own
        playbook.write_text(yaml.safe_dump(play, sort_keys=False))
        argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args
        for extra_inventory in inventories:
            argv += ["-i", str(extra_inventory)]
        argv.append(str(playbook))
        if check:
            argv.append("--check")
        if diff:
            argv.append("--diff")
        if verbosity:
            argv.append("-" + "v" * verbosity)
        if extra_vars:
            argv += ["-e", json.dumps(extra_vars)]
        run_env = dict(os.environ)
        run_env.update({
            "ANSIBLE_COLLECTIONS_PATH": os.path.join(ROOT, ".tmp", "collections"),
            "ANSIBLE_ROLES_PATH": os.path.join(ROOT, "roles"),
            "ANSIBLE_STDOUT_CALLBACK": callback,
            "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_HOST_KEY_CHECKING": "0",
        })
        run_env.update(env or {})
        proc = subprocess.run(argv, cwd=ROOT, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, check=False)
        results = _results_from_json(proc.stdout) if callback.endswith("json") else []
        outcome = PlaybookRun(proc.returncode, proc.stdout, proc.stderr, results)
        if proc.returncode != 0 and expect_failure is False:  # None: either outcome is the test's to judge
            raise AssertionError("ansible-playbook failed (rc %s):\n%s\n%s" % (
                proc.returncode, json.dumps(outcome.failed, indent=1)[:6000], proc.stderr[-3000:]))
        if proc.returncode == 0 and expect_failure is True:
            raise AssertionError("ansible-playbook succeeded but a failure was expected:\n%s"
                                 % json.dumps(results, indent=1)[:6000])
        return outcome

    return run


# The files that keep one worker longest (their seconds in the integration stage of .ci/run at 7179e6a: 352, 345,
# 285, 230, 198, 190, 112, 111, 96, 86). tools/test.sh hands whole files to the two workers in the order collected
# (--dist loadfile --no-loadscope-reorder); these go first, so that no long file starts while the other worker has
# nothing left to do. The other files keep pytest-randomly's order, and so does every test within its file.
LONG_FILES = ("test_site_crash.py", "test_site_layer_kills.py", "test_awx_runner.py", "test_site_chaos.py",
              "test_upgrade_guests.py", "test_vm_vgpu_crash.py", "test_ee.py", "test_gpu_monitoring.py",
              "test_guest_round_trips.py", "test_guest_crash.py")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    def rank(item):
        name = os.path.basename(str(item.fspath))
        return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)
