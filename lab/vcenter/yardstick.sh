#!/usr/bin/env bash
# Runs community.vmware's own integration targets against a lab of its own, with the lab's prepare_vmware_tests
# binding (lab/vcenter/yardstick/) in place of the original role, and prints pass or fail per target.
#
#   lab/vcenter/yardstick.sh <community.vmware git directory> [target ...]
#
# The checkout's HEAD is exported under .tmp/yardstick (its code never enters this repository); the lab starts at
# LAB_PORT_OFFSET (default 10000) under .tmp/lab-yardstick and is reset between targets; each target's log goes to
# .tmp/yardstick/logs/<target>.log.
#
# Port 443: ansible-test turns the cloud config's vcenter_port into module_defaults for community.vmware's action
# group, so its modules reach the lab's own port. The targets also call a few vmware.vmware modules, which are
# outside that group and always dial 443 (ansible-test passes no VMWARE_PORT through). For those, socat forwards
# 443 on a loopback address of this lab's own (127.0.0.<2 + offset/1000>) to the lab; binding a port below 1024
# needs root or CAP_NET_BIND_SERVICE. Without it the script goes on and those tasks fail with "Connection refused".
# The lab's own port is forwarded on that address as well, since the lab listens on 127.0.0.1 only.
#
# Host names: some tasks connect to an ESXi host itself (hostname: '{{ esxi1 }}', with the hosts' root account),
# which the lab's vCenter answers as that host's hostd when the request's Host header names it. For the run, the
# script adds a line per lab host to /etc/hosts that resolves its name to the loopback address above, marked with
# this run's id, and removes exactly those lines on exit. Without write access to /etc/hosts those tasks fail with
# "Name or service not known".
#
# YARDSTICK_VENV names the virtual environment that runs ansible-test and the modules (default .venv). It needs
# tests/requirements.txt, including VMware's vSphere Automation SDK (vmware-vcenter, …), which vmware.vmware.guest_info
# and community.vmware's REST-based modules (vmware_object_rename, …) import.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
source_git=${1:?usage: $0 <community.vmware git directory> [target ...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(vmware_host_facts vmware_cluster_info vmware_host_passthrough
    vmware_guest_powerstate vmware_vm_info)
offset=${LAB_PORT_OFFSET:-10000}
state=$root/.tmp/lab-yardstick
work=$root/.tmp/yardstick
collection=$work/ansible_collections/community/vmware
venv=${YARDSTICK_VENV:-$root/.venv}
py=$venv/bin/python
lab_var() { sed -n "s/^$1: *//p" "$root/inventories/lab/group_vars/all.yml"; }
port=$(( $(lab_var vcenter_port) + offset ))
address=127.0.0.$(( 2 + offset / 1000 % 250 ))

rm -rf "$collection" && mkdir -p "$collection" "$work/logs"
git --git-dir="$source_git" archive HEAD | tar -x -C "$collection"
rm -rf "$collection/tests/integration/targets/prepare_vmware_tests"
cp -r "$root/lab/vcenter/yardstick/prepare_vmware_tests" "$collection/tests/integration/targets/"
cloud_config=$collection/tests/integration/cloud-config-vcenter.ini
cat > "$work/cloud-config-base.ini" <<INI
[DEFAULT]
vcenter_hostname: $address
vcenter_port: $port
vcenter_username: $(lab_var vcenter_username)
vcenter_password: $(lab_var vcenter_password)
vmware_validate_certs: false
esxi_username: $(lab_var esxi_username)
esxi_password: $(lab_var esxi_password)
INI
# ansible-test lists a collection's files with git: the export is a repository of its own, not part of this one.
cp "$work/cloud-config-base.ini" "$cloud_config"
git -C "$collection" init -q && git -C "$collection" add -A

# The lab's default topology under the names the original role gives its inventory (its datacenter DC0, the
# cluster the binding picks DC0_C0): several targets name DC0, DC0_C0 and /DC0/vm/F0 in their task files. The
# objects, hosts and GPUs stay the lab's own; only these two names change (a one-host DC0_C0 also gets a second
# host, below). The lab also serves the NFS exports the binding mounts as ro_datastore and rw_datastore.
"$py" - "$root/lab/topologies/default.yml" "$work/topology.yml" "$work/host-names" "$work/two-hosts.ini" <<'PY' || exit 1
import sys
import yaml
with open(sys.argv[1]) as handle:
    topology = yaml.safe_load(handle)
datacenter = topology["datacenters"][0]
datacenter["name"] = "DC0"
first = sorted((c for c in datacenter["clusters"] if c.get("hosts")), key=lambda c: c["name"])[0]
first["name"] = "DC0_C0"
# The original's DC0_C0 has two hosts in a two-host job (esxi1, esxi2); a single-host cluster gets a second host
# like its first (same GPUs, no BMC or host shell), so that the targets of such jobs have their esxi2. The
# original's hosts have at least three NICs (vmnic2 is a target's standby uplink): the lab's hosts get four.
if len(first["hosts"]) == 1:
    twin = dict((k, v) for k, v in first["hosts"][0].items() if k not in ("bmc", "shell"))
    twin["name"] = "esxi-yardstick-2.lab.local"
    first["hosts"].append(twin)
for host in [h for c in datacenter.get("clusters", []) for h in c.get("hosts", [])] + datacenter.get("hosts", []):
    host["nics"] = 4
topology["nfs_exports"] = ["nfs.lab.local:/srv/share/isos", "nfs.lab.local:/srv/share/vms"]  # yardstick_nfs(_rw)
# The first two hosts of that cluster: the esxi1/esxi2 hostnames of a two-host job's cloud config (below).
two_hosts = sorted(host["name"] for host in first.get("hosts", []))[:2]
with open(sys.argv[2], "w") as handle:
    yaml.safe_dump(topology, handle)
with open(sys.argv[4], "w") as handle:
    handle.write("".join("esxi%d_hostname: %s\n" % (i + 1, name) for i, name in enumerate(two_hosts)))
with open(sys.argv[3], "w") as handle:
    for dc in topology["datacenters"]:
        for host in [h for c in dc.get("clusters", []) for h in c.get("hosts", [])] + dc.get("hosts", []):
            handle.write(host["name"] + "\n")
PY
"$py" "$root/lab/labctl.py" up --no-bmc --topology "$work/topology.yml" --state-dir "$state" --port-offset "$offset" \
    >/dev/null || exit 1
forwarders=()
for listen in "$port" 443; do
    socat TCP-LISTEN:"$listen",bind="$address",fork,reuseaddr TCP:127.0.0.1:"$port" 2>>"$work/logs/socat.log" &
    forwarders+=($!)
done
hosts_marker="# lab yardstick $offset $$"
forget_host_names() {
    grep -vF "$hosts_marker" /etc/hosts >"$work/hosts.kept" && cat "$work/hosts.kept" >/etc/hosts
}
trap 'kill "${forwarders[@]}" 2>/dev/null; forget_host_names; "$py" "$root/lab/labctl.py" down --state-dir "$state" >/dev/null' EXIT
# /etc/hosts is rewritten in place (it may be a bind mount): only this run's marked lines go on exit.
sed "s/\$/ $hosts_marker/; s/^/$address /" "$work/host-names" >>/etc/hosts 2>>"$work/logs/socat.log" ||
    echo "cannot add the lab's host names to /etc/hosts: tasks that dial a host by name will fail" >&2

failed=0
for target in "${targets[@]}"; do
    "$py" "$root/lab/labctl.py" reset --state-dir "$state" >/dev/null
    # A target of a two-host job (alias zuul/vmware/vcenter_2esxi) gets that job's esxi1/esxi2_hostname, as in CI.
    cp "$work/cloud-config-base.ini" "$cloud_config"
    if grep -qx "zuul/vmware/vcenter_2esxi" "$collection/tests/integration/targets/$target/aliases" 2>/dev/null; then
        cat "$work/two-hosts.ini" >>"$cloud_config"
    fi
    start=$SECONDS
    if (cd "$collection" && PATH="$venv/bin:$PATH" ansible-test integration --local \
            --python "$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" -v "$target") \
            >"$work/logs/$target.log" 2>&1; then
        result=pass
    else
        result=FAIL failed=$((failed + 1))
    fi
    # The target's own tasks that skipped at least once (a loop item or the whole task).
    skipped=$(awk -v t="TASK [$target :" 'index($0, "TASK [") == 1 { task = $0 }
        /^skipping:/ && index(task, t) == 1 { seen[task] = 1 } END { print length(seen) }' "$work/logs/$target.log")
    printf '%-40s %-5s %4ds  %s of its tasks skipped\n' "$target" "$result" $((SECONDS - start)) "$skipped"
done
exit $((failed > 0))
