"""The lab's guests: Linux containers with systemd as PID 1 that stand for the topology's guest VMs, started and
removed with podman, reached over SSH with the lab's key (lab/labctl.py starts them with the rest of the lab; tests
and benchmarks start guests of their own through it)."""

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUEST_IMAGE = os.path.join(ROOT, "lab", "guests", "guest-image.sh")
GUEST_STANDINS = os.path.join(ROOT, "lab", "guests", "standins", "build.py")
# Where lab/guests/guest-image.sh writes the podman settings this machine needs; `make lab` exports it too.
CONTAINERS_CONF = os.path.join(ROOT, ".tmp", "molecule", "containers.conf")
GUEST_LABEL = "owner=gpuops-lab"
# Each guest's (and bare-metal server's) sshd is published on 127.0.0.1 at a port of GUEST_SSH_PORTS, its
# ssh_port or the first plus its index, and its node exporter (port 9100 inside, gpuops.vgpu.gpu_monitoring) at the
# same place in GUEST_METRICS_PORTS (9101, 9102, ...); both plus the lab's port offset. The ranges end below the BMCs
# of a lab 1000 ports up (8441 + 1000), where each further integration worker runs its own.
GUEST_SSH_PORTS = range(2201, 2541)
GUEST_METRICS_PORTS = range(9101, 9101 + len(GUEST_SSH_PORTS))
GUEST_SSH_PORT = GUEST_SSH_PORTS[0]
GUEST_SSH_KEY = "guest_ssh_key"
GUEST_KNOWN_HOSTS = "guest_known_hosts"
# How long a guest's systemd may take to come up.
GUEST_BOOT_TIMEOUT = 60


def podman(*args, **kwargs):
    env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF, GPUOPS_CONTAINERS_CONF=CONTAINERS_CONF)
    return subprocess.run(["podman"] + list(args), env=env, check=kwargs.get("check", True), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)


def guest_ports(guest, index, port_offset):
    """The SSH and node exporter ports ``guest`` (the ``index``-th) is published at."""
    base = guest.get("ssh_port", GUEST_SSH_PORT + index)
    if base not in GUEST_SSH_PORTS:
        sys.exit("Lab guest %s: ssh_port %s is outside %d-%d (before the port offset); pick one inside, clear of the "
                 "other guests'." % (guest["name"], base, GUEST_SSH_PORTS[0], GUEST_SSH_PORTS[-1]))
    metrics = guest.get("metrics_port", GUEST_METRICS_PORTS[base - GUEST_SSH_PORT])
    return base + port_offset, metrics + port_offset


def start_guests(guests, state_dir, port_offset=0, lab=None, known_hosts_file=GUEST_KNOWN_HOSTS, reboots=False):
    """Linux guest containers (systemd as PID 1) that stand for the topology's guest VMs, with the lab's stand-in
    NVIDIA artifacts on their share (/srv/lab-artifacts), a vGPU on their PCI bus (lspci), and sshd reached with
    the lab's key (``GUEST_SSH_KEY`` in the state directory, host keys in ``GUEST_KNOWN_HOSTS``).

    A guest with ``passthrough: true`` stands for a VM with whole GPUs and no driver: once the data center driver is
    installed, its nvidia-smi hands over to the DirectPath stand-in, which reads the lab vCenter (``lab``: ``url``,
    ``cafile``, ``catalog``) through the container's gateway to the host's loopback (slirp4netns
    ``allow_host_loopback``, 10.0.2.2) for the GPUs the lab gave ``vm``. A guest with ``vgpu_vm`` stands for that
    vGPU VM the same way: its GRID driver stand-in asks the lab whether the VM's host accepts it
    (/etc/gpuops-lab/vgpu.json).

    Returns ``{name: {"container": ..., "ssh_port": ...}}``; a lab at a port offset names its containers
    ``<name>-<offset>`` so that it runs beside another lab. Their host keys go to ``known_hosts_file`` in the state
    directory (another file for another set of containers of the same lab). With ``reboots`` a container comes back
    after a reboot inside it (systemd's reboot ends a container's init; podman's restart policy starts it again with
    its files as they were and a fresh /run), as a machine does."""
    env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF, GPUOPS_CONTAINERS_CONF=CONTAINERS_CONF)
    image = subprocess.run([GUEST_IMAGE], env=env, check=True, stdout=subprocess.PIPE,
                           universal_newlines=True).stdout.strip().splitlines()[-1]
    standins = os.path.join(state_dir, "standins")
    subprocess.run([sys.executable, GUEST_STANDINS, "--out", standins], check=True, stdout=subprocess.DEVNULL)
    key = os.path.join(state_dir, GUEST_SSH_KEY)
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuops-lab", "-f", key], check=True)
    with open(key + ".pub") as handle:
        public_key = handle.read().strip()
    started = {}
    for index, guest in enumerate(guests):
        container = guest["name"] if not port_offset else "%s-%d" % (guest["name"], port_offset)
        port, metrics_port = guest_ports(guest, index, port_offset)
        reaches_lab = guest.get("passthrough") or guest.get("vgpu_vm")
        network = ["--network", "slirp4netns:allow_host_loopback=true"] if reaches_lab else []
        restart = ["--restart", "always"] if reboots else []
        podman("run", "--detach", "--replace", "--name", container, "--hostname", guest["name"],
               "--systemd=always", "--label", GUEST_LABEL, "--publish", "127.0.0.1:%d:22" % port,
               "--publish", "127.0.0.1:%d:9100" % metrics_port, *network, *restart, image, "/sbin/init")
        started[guest["name"]] = {"container": container, "ssh_port": port, "metrics_port": metrics_port}
    known_hosts = []
    for name, guest in sorted(started.items()):
        container = guest["container"]
        # Until systemd has made its bus, systemctl cannot even wait for it; a loaded machine takes a while.
        deadline = time.monotonic() + GUEST_BOOT_TIMEOUT
        while True:
            state = podman("exec", container, "systemctl", "is-system-running", "--wait", check=False).stdout.strip()
            if "Failed to connect to bus" not in state or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if state not in ("running", "degraded"):
            sys.exit("The lab guest %s did not boot (systemd: %s)." % (name, state))
        podman("cp", standins + "/.", "%s:/srv/lab-artifacts" % container)
        podman("exec", container, "sh", "-ec",
               "cd /srv/lab-artifacts/tools; install -D -m 0644 vm-pci.dump /usr/share/gpuops-lab/vm-pci.dump; "
               "install -m 0755 lspci /usr/local/sbin/lspci; install -m 0755 ffmpeg /usr/local/bin/ffmpeg; "
               "mkdir -p /var/lib/gpuops-lab; install -d -m 0700 /root/.ssh; "
               "printf '%%s\\n' '%s' >/root/.ssh/authorized_keys; chmod 0600 /root/.ssh/authorized_keys" % public_key)
        spec = next(g for g in guests if g["name"] == name)
        if spec.get("passthrough"):
            install_directpath_smi(container, spec["vm"], lab)
        if spec.get("vgpu_vm"):
            write_lab_settings(container, "vgpu.json", spec["vgpu_vm"], lab)
        host_key = podman("exec", container, "cat", "/etc/ssh/ssh_host_ed25519_key.pub").stdout.split()
        known_hosts.append("[127.0.0.1]:%d %s %s\n" % (guest["ssh_port"], host_key[0], host_key[1]))
    with open(os.path.join(state_dir, known_hosts_file), "w") as handle:
        handle.writelines(known_hosts)
    return started


def write_lab_settings(container, name, vm, lab):
    """/etc/gpuops-lab/<name> in a guest: the VM it stands for and how it reaches the lab vCenter (its gateway to
    the host's loopback, the lab's certificate and catalog)."""
    if not lab:
        sys.exit("The lab guest %s stands for the VM %s and needs the lab vCenter." % (container, vm))
    scheme, _, rest = lab["url"].partition("://")
    host_port, _, path = rest.partition("/")
    settings = {"vm": vm, "lab_url": "%s://10.0.2.2:%s/%s" % (scheme, host_port.rpartition(":")[2], path),
                "server_name": host_port.rpartition(":")[0], "cafile": "/etc/gpuops-lab/lab-ca.pem",
                "catalog": "/etc/gpuops-lab/catalog.json"}
    podman("exec", container, "mkdir", "-p", "/etc/gpuops-lab")
    podman("cp", lab["cafile"], "%s:/etc/gpuops-lab/lab-ca.pem" % container)
    podman("cp", lab["catalog"], "%s:/etc/gpuops-lab/catalog.json" % container)
    podman("exec", container, "sh", "-ec", "printf '%%s\\n' '%s' >/etc/gpuops-lab/%s" % (json.dumps(settings), name))


def install_directpath_smi(container, vm, lab):
    """A VM with whole GPUs and no driver yet: the DirectPath stand-in, set up to read ``vm``'s GPUs from the lab
    vCenter, waits in /usr/lib/gpuops-lab for the data center driver's nvidia-smi (installed by
    gpuops.vgpu.nvidia_driver) to hand over to it; the lab's stand-in of NVIDIA's CUDA repository is the guest's
    package source for that driver."""
    write_lab_settings(container, "directpath.json", vm, lab)
    podman("exec", container, "sh", "-ec",
           "install -d /usr/lib/gpuops-lab; cp /srv/lab-artifacts/directpath/* /usr/lib/gpuops-lab/; "
           "echo 'deb [trusted=yes] file:/srv/lab-artifacts/cuda-repo ./' >/etc/apt/sources.list.d/cuda-lab.list")


def stop_guests(started):
    """The guest containers this lab started (other labs' containers carry the same label)."""
    if subprocess.run(["sh", "-c", "command -v podman"], stdout=subprocess.DEVNULL).returncode != 0:
        return
    names = [name for name in podman("ps", "-a", "--filter", "label=" + GUEST_LABEL, "--format", "{{.Names}}",
                                     check=False).stdout.split() if name in started]
    if names:
        podman("rm", "-f", *names, check=False)
        print("Removed the lab guests %s." % ", ".join(names))
