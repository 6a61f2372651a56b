#!/usr/bin/env python3
"""Start one Redfish BMC per lab host that has a ``bmc`` entry in the topology, all in this process.

    bmc_lab.py --topology T.json --cert C.pem --key K.pem --username U --password P --state-dir DIR --ready-file F
               [--reset-seconds 1.5]

Each BMC listens on 127.0.0.1:<port> over TLS and behaves like the vendor in ``vendors/<vendor>.yml``. The ready
file (JSON with every BMC's base URI) is written once all of them listen; SIGTERM or SIGINT stops them all.
"""

import argparse
import hashlib
import json
import logging
import os
import shutil
import signal
import ssl
import sys
import threading
import time
import uuid

import yaml
from flask import request as flask_request
from sushy_tools import error as sushy_error
from sushy_tools.emulator import main as sushy_main
from sushy_tools.emulator.resources import chassis as sushy_chassis
from sushy_tools.emulator.resources import drives as sushy_drives
from sushy_tools.emulator.resources import indicators as sushy_indicators
from sushy_tools.emulator.resources import managers as sushy_managers
from sushy_tools.emulator.resources import storage as sushy_storage
from sushy_tools.emulator.resources import vmedia as sushy_vmedia
from sushy_tools.emulator.resources import volumes as sushy_volumes
from sushy_tools.emulator.resources.systems import fakedriver
from werkzeug.serving import WSGIRequestHandler, make_server

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bmc_app import BmcApp  # noqa: E402
from bmc_errors import RedfishError  # noqa: E402
from bmc_state import RESET_SECONDS, Bmc  # noqa: E402

VENDORS = os.path.join(HERE, "vendors")
LOG = logging.getLogger("bmc")
DRIVERS = ("systems", "managers", "chassis", "indicators", "vmedia", "storage", "drives", "volumes")


class LabSystemsDriver(fakedriver.FakeDriver):
    """sushy's fake systems driver, with power state and BIOS version taken from the lab BMC."""

    def __init__(self, bmc, config, logger):
        self._config = config
        self._logger = logger
        self.bmc = bmc
        super().__init__()

    def get_power_state(self, identity):
        self._get(identity)
        return self.bmc.power_state()

    def set_power_state(self, identity, state):
        self._get(identity)
        try:
            self.bmc.reset(state)
        except RedfishError as err:
            raise sushy_error.FishyError(err.message, err.status)

    def get_versions(self, identity):
        return {"BiosVersion": self.bmc.profile["system"]["resource"]["BiosVersion"]}

    def get_bios(self, identity):
        return self.bmc.bios_current()

    def get_total_memory(self, identity):
        return self.bmc.profile["system"]["resource"]["MemorySummary"]["TotalSystemMemoryGiB"]


class SushyDrivers:
    """The sushy resource drivers of one BMC, each over its own configuration and state directory."""

    def __init__(self, bmc, identity, state_dir):
        system = bmc.profile["system"]
        config = {
            "SUSHY_EMULATOR_STATE_DIR": state_dir,
            "SUSHY_EMULATOR_FAKE_SYSTEMS": [{
                "uuid": system["id"], "name": bmc.host, "power_state": "On",
                "nics": [{"mac": identity["mac"], "ip": "127.0.0.1"}],
            }],
            "SUSHY_EMULATOR_CHASSIS": [{"Id": "Chassis", "Name": "Chassis", "UUID": identity["uuid"]}],
        }
        self.systems = LabSystemsDriver(bmc, config, LOG)
        self.chassis = sushy_chassis.StaticDriver(config, LOG)
        self.managers = sushy_managers.FakeDriver(config, LOG, self.systems, self.chassis)
        self.indicators = sushy_indicators.StaticDriver(config, LOG)
        self.vmedia = sushy_vmedia.StaticDriver(config, LOG)
        self.storage = sushy_storage.StaticDriver(config, LOG)
        self.drives = sushy_drives.StaticDriver(config, LOG)
        self.volumes = sushy_volumes.StaticDriver(config, LOG)


def bind_sushy_drivers_per_request():
    """sushy's application emulates one site per process; here every request names its BMC in the environ."""
    for name in DRIVERS:
        setattr(sushy_main.Application, name,
                property(lambda app, attr=name: getattr(flask_request.environ["lab.drivers"], attr)))
    sushy_main.app.config.update(SUSHY_EMULATOR_FEATURE_SET="full", SUSHY_EMULATOR_FAKE_DRIVER=True)
    return sushy_main.app


def host_identity(host):
    digest = hashlib.sha256(host.encode()).hexdigest().upper()
    number, tag = int(digest[:16], 16), ""
    while len(tag) < 7:
        number, digit = divmod(number, 36)
        tag += "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"[digit % 34]
    return {
        "host": host,
        "service_tag": tag,
        "serial": "CN" + str(int(digest[:12], 16))[:12],
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, host)),
        "mac": ":".join(["b0:26:28"] + [digest[i:i + 2].lower() for i in (0, 2, 4)]),
    }


def fill(value, identity):
    if isinstance(value, str):
        return value.format(**identity)
    if isinstance(value, list):
        return [fill(item, identity) for item in value]
    if isinstance(value, dict):
        return dict((key, fill(item, identity)) for key, item in value.items())
    return value


def load_profile(vendor, identity):
    path = os.path.join(VENDORS, "%s.yml" % vendor)
    if not os.path.exists(path):
        known = sorted(name[:-4] for name in os.listdir(VENDORS) if name.endswith(".yml"))
        raise SystemExit("Unknown BMC vendor %r: known vendors are %s." % (vendor, ", ".join(known)))
    with open(path) as handle:
        profile = fill(yaml.safe_load(handle), identity)
    check_profile(vendor, profile)
    return profile


def check_profile(vendor, profile):
    """Catch YAML 1.1 surprises (an unquoted On is a boolean) before they reach a client."""
    problems = ["reset type %r" % value for value in profile["system"]["reset_types"] if not isinstance(value, str)]
    for entry in profile["bios"]["attributes"]:
        problems += ["%s value %r" % (entry["name"], value) for value in entry.get("values", [])
                     if not isinstance(value, str)]
    if problems:
        raise SystemExit("Vendor profile %s: quote these in the YAML: %s." % (vendor, "; ".join(problems)))


def bmc_hosts(topology):
    """The ESXi hosts and the bare-metal GPU servers (``servers:``) that have a BMC."""
    hosts = list(topology.get("servers") or [])
    for datacenter in topology.get("datacenters") or []:
        hosts.extend(datacenter.get("hosts") or [])
        for cluster in datacenter.get("clusters") or []:
            hosts.extend(cluster.get("hosts") or [])
    for host in hosts:
        if host.get("bmc"):
            yield host


class Handler(WSGIRequestHandler):
    """Closes keep-alive connections while the BMC is down, as a rebooting BMC would."""

    def handle_one_request(self):
        if self.server.lab_bmc.is_down():
            self.close_connection = True
            return None
        return super().handle_one_request()

    def log_request(self, *args, **kwargs):
        pass


class BmcServer:
    """One TLS listener. ``down()`` closes the listening socket while the BMC is down, so connections are refused."""

    def __init__(self, bmc, ssl_context):
        self.bmc = bmc
        self.app = None
        self.ssl_context = ssl_context
        self.server = None
        self.thread = None
        self.lock = threading.Lock()

    def start(self, app=None):
        with self.lock:
            self.app = app or self.app
            self.server = make_server("127.0.0.1", self.bmc.port, self.app, threaded=True,
                                      request_handler=Handler, ssl_context=self.ssl_context)
            self.server.lab_bmc = self.bmc
            self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1},
                                           name="bmc-%s" % self.bmc.port, daemon=True)
            self.thread.start()

    def stop(self):
        with self.lock:
            if self.server is not None:
                self.server.shutdown()
                self.server.server_close()
                self.server = None

    def down(self):
        def cycle():
            time.sleep(0.2)  # let the answer to the fault request leave first
            self.stop()
            while self.bmc.is_down():
                time.sleep(0.05)
            for _attempt in range(50):
                try:
                    self.start()
                    return
                except OSError:
                    time.sleep(0.1)
            LOG.error("BMC %s could not listen on port %s again", self.bmc.host, self.bmc.port)

        threading.Thread(target=cycle, name="bmc-down-%s" % self.bmc.port, daemon=True).start()


def fresh_drivers(bmc, identity, parent):
    """A function that gives the BMC's sushy drivers over a state directory emptied first."""
    return lambda: SushyDrivers(bmc, identity, fresh_dir(parent, bmc.host))


def fresh_dir(parent, name):
    """A BMC starts from its factory state: sushy's saved state of an earlier run is dropped."""
    path = os.path.join(parent, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topology", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--reset-seconds", type=float, default=RESET_SECONDS,
                        help="how long a reboot takes (power off, POST, power on)")
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with open(args.topology) as handle:
        topology = json.load(handle)
    os.makedirs(args.state_dir, exist_ok=True)
    ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ssl_context.load_cert_chain(args.cert, args.key)
    sushy_main.app.config["SUSHY_EMULATOR_STATE_DIR"] = fresh_dir(args.state_dir, "sushy")
    sushy_app = bind_sushy_drivers_per_request()

    servers, ready = [], {}
    for host in bmc_hosts(topology):
        identity = host_identity(host["name"])
        vendor = host["bmc"]["vendor"]
        bmc = Bmc(host["name"], int(host["bmc"]["port"]), vendor, load_profile(vendor, identity),
                  args.username, args.password, args.reset_seconds)
        server = BmcServer(bmc, ssl_context)
        try:
            server.start(BmcApp(bmc, sushy_app, fresh_drivers(bmc, identity, args.state_dir), on_down=server.down))
        except OSError as error:
            raise SystemExit("The BMC of %s cannot listen on 127.0.0.1:%s: %s." % (host["name"], bmc.port, error))
        servers.append(server)
        baseuri = "https://127.0.0.1:%s" % bmc.port
        ready[host["name"]] = {"baseuri": baseuri, "vendor": vendor, "lab": baseuri + "/lab"}
        LOG.info("BMC %s (%s) listening on %s", host["name"], vendor, baseuri)

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    temporary = args.ready_file + ".tmp"
    with open(temporary, "w") as handle:
        json.dump({"pid": os.getpid(), "bmcs": ready}, handle, indent=1)
    os.replace(temporary, args.ready_file)
    stopping.wait()
    stoppers = [threading.Thread(target=server.stop) for server in servers]
    for stopper in stoppers:
        stopper.start()
    for stopper in stoppers:
        stopper.join()
    LOG.info("All BMCs stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
