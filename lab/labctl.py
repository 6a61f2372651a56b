#!/usr/bin/env python3
"""Start, stop and inspect the lab: the vCenter simulator with GPUs, the Redfish BMCs and the ESXi host shells.

    labctl.py up [--topology FILE] [--state-dir DIR] [--vcenter-port N] [--port-offset N] [--no-bmc] [--no-shells]
                 [--guests]
    labctl.py down [--state-dir DIR]
    labctl.py reset [--state-dir DIR]
    labctl.py status [--state-dir DIR]
    labctl.py chaos [--state-dir DIR] (--rate SHARE --seconds N [--seed N] [--kinds K,K] | --off | --report)

Credentials and the vCenter port come from inventories/lab (group_vars), so the lab and the inventory that
points at it cannot disagree. Everything the lab writes (certificates, logs, pid files, state) stays in the
state directory (default .tmp/lab).
"""

import argparse
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hosts"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "guests"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers"))
import shells  # noqa: E402 (lab/hosts: the ESXi host shells)
from containers import (  # noqa: E402,F401 (lab/guests: the guest containers; tests reach them through labctl)
    CONTAINERS_CONF, GUEST_KNOWN_HOSTS, GUEST_SSH_KEY, GUEST_SSH_PORT, podman, start_guests, stop_guests)
from servers import SERVER_KNOWN_HOSTS, start_servers  # noqa: E402,F401 (lab/servers: bare-metal GPU servers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VCSIM = os.path.join(ROOT, "lab", ".build", "vcsim-gpu")
BMC_LAB = os.path.join(ROOT, "lab", "bmc", "bmc_lab.py")
EXPORT_CATALOG = os.path.join(ROOT, "lab", "tools", "export_catalog.py")
MAKE_BUNDLE = os.path.join(ROOT, "lab", "tools", "make_bundle.py")
DEFAULT_TOPOLOGY = os.path.join(ROOT, "lab", "topologies", "default.yml")
INVENTORY_VARS = os.path.join(ROOT, "inventories", "lab", "group_vars")
START_TIMEOUT = 60
# A BMC that a test took down (a fault) refuses connections until its time is up; a reset waits that long at most.
BMC_DOWN_TIMEOUT = 60


def inventory_settings():
    with open(os.path.join(INVENTORY_VARS, "all.yml")) as handle:
        vcenter = yaml.safe_load(handle)
    with open(os.path.join(INVENTORY_VARS, "bmc_hosts.yml")) as handle:
        bmc = yaml.safe_load(handle)
    return vcenter, bmc


def load_topology(path):
    with open(path) as handle:
        text = handle.read()
    topology = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    if not isinstance(topology, dict) or not topology.get("datacenters"):
        sys.exit("Topology %s has no datacenters." % path)
    return topology


def bmc_hosts(topology):
    """The ESXi hosts and the bare-metal servers (``servers:``) that have a BMC."""
    hosts = list(shells.topology_hosts(topology)) + list(topology.get("servers") or [])
    return (host for host in hosts if host.get("bmc"))


def ensure_certificate(state_dir):
    cert = os.path.join(state_dir, "lab-cert.pem")
    key = os.path.join(state_dir, "lab-key.pem")
    if not (os.path.exists(cert) and os.path.exists(key)):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365", "-keyout", key,
             "-out", cert, "-subj", "/CN=127.0.0.1/O=gpuops lab",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def read_services(state_dir):
    path = os.path.join(state_dir, "services.json")
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        return json.load(handle)


def write_services(state_dir, services):
    with open(os.path.join(state_dir, "services.json"), "w") as handle:
        json.dump(services, handle, indent=2)


def start(name, argv, state_dir, ready_file):
    if os.path.exists(ready_file):
        os.unlink(ready_file)
    log = open(os.path.join(state_dir, "%s.log" % name), "ab")
    proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
                            cwd=ROOT)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("The lab's %s exited with code %s; the end of %s:\n%s"
                     % (name, proc.returncode, log.name, log_tail(log.name)))
        if os.path.exists(ready_file) and os.path.getsize(ready_file) > 0:
            return proc.pid
        time.sleep(0.1)
    stop_pid(proc.pid)
    sys.exit("The lab's %s did not start within %s s; the end of %s:\n%s"
             % (name, START_TIMEOUT, log.name, log_tail(log.name)))


def log_tail(path, lines=15):
    """The last lines of a service's log, for the message that says it failed (CI keeps the message, not the log)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - 8192))
        return "\n".join(handle.read().decode("utf-8", "replace").splitlines()[-lines:])


def stop_pid(pid, timeout=10):
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.1)
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
    if pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def lab_tls():
    """A client context for the lab's own self-signed certificate (no system trust store to load)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def wait_answering(url, timeout=20, method="GET", context=None):
    context = context or lab_tls()
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method=method), context=context,
                                        timeout=30) as answer:
                return json.load(answer)
        except urllib.error.HTTPError:
            raise
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def reset_lab(services):
    """Put a running lab back to its start without a restart: the vCenter builds its topology again, every BMC
    goes back to its factory state. Returns the vCenter's answer."""
    context = lab_tls()
    answer = wait_answering(services["vcenter"]["lab"] + "/reset", method="POST", context=context)
    for bmc in services.get("bmc", {}).get("hosts", {}).values():
        wait_answering(bmc["baseuri"] + "/lab/reset", timeout=BMC_DOWN_TIMEOUT, method="POST", context=context)
    return answer


def cmd_up(args):
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    topology_path = os.path.abspath(args.topology)
    services = read_services(state_dir)
    running = dict((name, svc) for name, svc in services.items() if "pid" in svc and pid_alive(svc["pid"]))
    if running:
        if services.get("vcenter", {}).get("topology") != topology_path:
            sys.exit("The lab in %s runs another topology (%s); run `make lab-down` first."
                     % (state_dir, services["vcenter"].get("topology")))
        print("The lab is already running.")
        print_endpoints(services)
        return
    if not os.path.exists(VCSIM):
        sys.exit("%s is missing: run `make lab-build` (or `make lab-up`, which builds it)." % VCSIM)

    vcenter_vars, bmc_vars = inventory_settings()
    port = (args.vcenter_port or vcenter_vars["vcenter_port"]) + args.port_offset
    topology = load_topology(topology_path)
    for host in bmc_hosts(topology):
        host["bmc"]["port"] += args.port_offset
    for host in shells.shell_hosts(topology):
        host["shell"]["port"] += args.port_offset
    if args.guests:
        # VMware Tools of a VM whose guest runs as a container reports the address the guest is reached at: the
        # loopback, where each container's sshd has a port of its own (the inventory's ansible_port).
        guest_vms = set(guest["vm"] for guest in topology.get("guests") or [] if guest.get("vm"))
        for datacenter in topology["datacenters"]:
            for vm in datacenter.get("vms") or []:
                if vm["name"] in guest_vms:
                    vm.setdefault("guest_ip", "127.0.0.1")
    topology_json = os.path.join(state_dir, "topology.json")
    with open(topology_json, "w") as handle:
        json.dump(topology, handle, indent=1)
    catalog_json = os.path.join(state_dir, "catalog.json")
    subprocess.run([sys.executable, EXPORT_CATALOG, catalog_json], check=True)
    cert, key = ensure_certificate(state_dir)
    depot_dir = os.path.join(state_dir, "depot")  # offline bundles, served at /lab/depot/ for vLCM imports
    os.makedirs(depot_dir, exist_ok=True)
    # Two vGPU releases, so clusters can move between them: vGPU 15.2 (R525) and vGPU 16.0 (R535).
    for driver in ("525.105.14", "535.54.06"):
        for preset in ("nvidia-host-driver", "nvidia-gpu-mgmt-daemon"):
            subprocess.run([sys.executable, MAKE_BUNDLE, preset, depot_dir, "--driver", driver], check=True,
                           stdout=subprocess.DEVNULL)

    services = {}
    ready = os.path.join(state_dir, "vcenter.ready")
    pid = start("vcenter", [
        VCSIM, "-listen", "127.0.0.1:%s" % port, "-topology", topology_json, "-catalog", catalog_json,
        "-username", vcenter_vars["vcenter_username"], "-password", vcenter_vars["vcenter_password"],
        "-cert", cert, "-key", key, "-ready-file", ready, "-depot-dir", depot_dir,
        "-esxi-username", vcenter_vars["esxi_username"], "-esxi-password", vcenter_vars["esxi_password"],
    ], state_dir, ready)
    services["vcenter"] = {"pid": pid, "url": "https://127.0.0.1:%s/sdk" % port, "topology": topology_path,
                           "port": port, "lab": "https://127.0.0.1:%s/lab" % port, "depot_dir": depot_dir}
    write_services(state_dir, services)

    if not args.no_bmc and os.path.exists(BMC_LAB) and any(True for _ in bmc_hosts(topology)):
        ready = os.path.join(state_dir, "bmc.ready")
        pid = start("bmc", [
            sys.executable, BMC_LAB, "--topology", topology_json, "--cert", cert, "--key", key,
            "--username", bmc_vars["bmc_username"], "--password", bmc_vars["bmc_password"],
            "--state-dir", os.path.join(state_dir, "bmc"), "--ready-file", ready,
        ], state_dir, ready)
        services["bmc"] = {"pid": pid, "hosts": dict(
            (host["name"], {"baseuri": "https://127.0.0.1:%s" % host["bmc"]["port"], "vendor": host["bmc"]["vendor"]})
            for host in bmc_hosts(topology))}
        write_services(state_dir, services)

    wait_answering(services["vcenter"]["lab"] + "/state")
    if not args.no_shells and any(True for _ in shells.shell_hosts(topology)):
        try:
            hosts, files = shells.start_shells(topology, state_dir, services["vcenter"]["lab"], cert, catalog_json,
                                               state_dir)
        except RuntimeError as error:
            sys.exit("%s Run `make lab-down` to stop the rest of the lab." % error)
        services["shells"] = dict(files, hosts=hosts)
        write_services(state_dir, services)
    if args.guests and topology.get("guests"):
        guests = start_guests(topology["guests"], state_dir, args.port_offset,
                              lab={"url": services["vcenter"]["lab"], "cafile": cert, "catalog": catalog_json})
        services["guests"] = {"names": sorted(guest["container"] for guest in guests.values()), "hosts": guests,
                              "ssh_key": os.path.join(state_dir, GUEST_SSH_KEY),
                              "known_hosts": os.path.join(state_dir, GUEST_KNOWN_HOSTS),
                              "containers_conf": CONTAINERS_CONF}
        write_services(state_dir, services)
    if args.guests and topology.get("servers"):
        servers = start_servers(topology["servers"], state_dir, args.port_offset, catalog_json)
        services["servers"] = {"names": sorted(server["container"] for server in servers.values()),
                               "hosts": servers, "ssh_key": os.path.join(state_dir, GUEST_SSH_KEY),
                               "known_hosts": os.path.join(state_dir, SERVER_KNOWN_HOSTS)}
        write_services(state_dir, services)
    print_endpoints(services)


def print_endpoints(services):
    vcenter = services.get("vcenter")
    if vcenter:
        print("vCenter (SOAP):  %s" % vcenter["url"])
        print("Lab endpoints:   %s/state  %s/stats  %s/faults" % (vcenter["lab"], vcenter["lab"], vcenter["lab"]))
        if vcenter.get("depot_dir"):
            print("Depot:           %s/depot/<file> serves %s" % (vcenter["lab"], os.path.relpath(vcenter["depot_dir"], ROOT)))
        print("Topology:        %s" % os.path.relpath(vcenter["topology"], ROOT))
    for name, bmc in sorted(services.get("bmc", {}).get("hosts", {}).items()):
        print("BMC %-22s %s (%s)" % (name + ":", bmc["baseuri"], bmc["vendor"]))
    shell = services.get("shells")
    for name, host in sorted((shell or {}).get("hosts", {}).items()):
        print("Host shell %-15s ssh -i %s -o UserKnownHostsFile=%s -p %s root@127.0.0.1" % (
            name + ":", os.path.relpath(shell["private_key"], ROOT), os.path.relpath(shell["known_hosts"], ROOT),
            host["port"]))
    guests = services.get("guests", {})
    for name, guest in sorted(guests.get("hosts", {}).items()):
        print("Guest %-20s ssh -i %s -p %d root@127.0.0.1 (podman container %s)"
              % (name + ":", os.path.relpath(guests["ssh_key"], ROOT), guest["ssh_port"], guest["container"]))
    servers = services.get("servers", {})
    for name, server in sorted(servers.get("hosts", {}).items()):
        print("GPU server %-15s ssh -i %s -p %d root@127.0.0.1 (podman container %s, driver %s)"
              % (name + ":", os.path.relpath(servers["ssh_key"], ROOT), server["ssh_port"], server["container"],
                 server["driver"]))


def cmd_down(args):
    state_dir = os.path.abspath(args.state_dir)
    services = read_services(state_dir)
    for containers in ("guests", "servers"):
        if services.get(containers):
            stop_guests(services[containers].get("names") or [])
    for name, host in sorted(services.get("shells", {}).get("hosts", {}).items()):
        stop_shell(name, host["pid"])
    for name, svc in services.items():
        if "pid" in svc and pid_alive(svc["pid"]):
            stop_pid(svc["pid"])
            print("Stopped the lab's %s (pid %s)." % (name, svc["pid"]))
    path = os.path.join(state_dir, "services.json")
    if os.path.exists(path):
        os.unlink(path)


def stop_shell(name, pid):
    """The host's sshd and the sessions it serves (each connection runs in a session of its own)."""
    if not pid_alive(pid):
        return
    sessions = shells.descendants(pid)
    stop_pid(pid)
    for child in sessions:
        if pid_alive(child):
            try:
                os.kill(child, signal.SIGTERM)
            except OSError:
                pass
    print("Stopped the host shell of %s (sshd pid %s, %d session processes)." % (name, pid, len(sessions)))


def cmd_reset(args):
    services = read_services(os.path.abspath(args.state_dir))
    pid = services.get("vcenter", {}).get("pid")
    if not pid or not pid_alive(pid):
        sys.exit("The lab is not running.")
    started = time.monotonic()
    answer = reset_lab(services)
    print("The lab is back to its start (vCenter %s ms, %d BMCs; %.2f s in all)." % (
        answer["reset_ms"], len(services.get("bmc", {}).get("hosts", {})), time.monotonic() - started))


def chaos_lab(services, config=None, stop=True):
    """Chaos on (``config``: seed, rate, seconds, kinds), off (``stop``) or only read, in the vCenter and every BMC;
    returns what each did: requests seen and faults by kind. Each service draws from its own generator, seeded from
    the seed and the service's place in the sorted list of names."""
    context = lab_tls()
    endpoints = {"vcenter": services["vcenter"]["lab"] + "/chaos"}
    for name, bmc in services.get("bmc", {}).get("hosts", {}).items():
        endpoints[name] = bmc["baseuri"] + "/lab/chaos"
    report = {}
    for index, (name, url) in enumerate(sorted(endpoints.items())):
        # Each service its own seed, derived from the one given, so the BMCs do not all fail the same requests.
        data = json.dumps(dict(config, seed=config.get("seed", 0) * 1000 + index)).encode() if config else None
        request = urllib.request.Request(url, data=data, method="POST" if config else "DELETE" if stop else "GET",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            report[name] = json.load(answer)
    return report


def cmd_chaos(args):
    services = read_services(os.path.abspath(args.state_dir))
    if not services.get("vcenter", {}).get("pid") or not pid_alive(services["vcenter"]["pid"]):
        sys.exit("The lab is not running.")
    if args.off or args.report:
        report = chaos_lab(services, stop=args.off)
    else:
        if args.rate is None or args.seconds is None:
            sys.exit("Give --rate (a share such as 0.1) and --seconds, or --off.")
        config = {"seed": args.seed, "rate": args.rate, "seconds": args.seconds}
        if args.kinds:
            config["kinds"] = args.kinds.split(",")
        try:
            report = chaos_lab(services, config)
        except urllib.error.HTTPError as err:
            sys.exit("The lab refused the chaos: %s" % err.read().decode())
    print(json.dumps(report, indent=1, sort_keys=True))


def cmd_status(args):
    services = read_services(os.path.abspath(args.state_dir))
    running = dict((name, svc) for name, svc in services.items() if "pid" not in svc or pid_alive(svc["pid"]))
    if not running:
        print("The lab is not running.")
        sys.exit(3)
    print(json.dumps(running, indent=2))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("up", "down", "reset", "status", "chaos"):
        cmd = sub.add_parser(name)
        cmd.add_argument("--state-dir", default=os.path.join(ROOT, ".tmp", "lab"))
        if name == "up":
            cmd.add_argument("--topology", default=os.environ.get("LAB_TOPOLOGY") or DEFAULT_TOPOLOGY)
            cmd.add_argument("--vcenter-port", type=int)
            cmd.add_argument("--no-bmc", action="store_true")
            cmd.add_argument("--no-shells", action="store_true", help="no SSH shells for the ESXi hosts")
            cmd.add_argument("--guests", action="store_true",
                             help="also start the topology's guest containers and bare-metal GPU servers (podman; "
                                  "what `make lab` uses)")
            cmd.add_argument("--port-offset", type=int, default=int(os.environ.get("LAB_PORT_OFFSET") or 0),
                             help="shift every port, so a second lab can run beside the first")
        if name == "chaos":
            cmd.add_argument("--rate", type=float, help="share of requests that fail, 0 to 1 (0.1: one in ten)")
            cmd.add_argument("--seconds", type=float, help="how long the chaos lasts")
            cmd.add_argument("--seed", type=int, default=1)
            cmd.add_argument("--kinds", help="reset_before,reset_after,unavailable (default: all three)")
            cmd.add_argument("--off", action="store_true", help="stop the chaos and print what it did")
            cmd.add_argument("--report", action="store_true", help="print what the chaos did so far")
    args = parser.parse_args()
    {"up": cmd_up, "down": cmd_down, "reset": cmd_reset, "status": cmd_status,
     "chaos": cmd_chaos}[args.command](args)


if __name__ == "__main__":
    main()
