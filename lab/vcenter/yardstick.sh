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
cat > "$collection/tests/integration/cloud-config-vcenter.ini" <<INI
[DEFAULT]
vcenter_hostname: $address
vcenter_port: $port
vcenter_username: $(lab_var vcenter_username)
vcenter_password: $(lab_var vcenter_password)
vmware_validate_certs: false
INI
# ansible-test lists a collection's files with git: the export is a repository of its own, not part of this one.
git -C "$collection" init -q && git -C "$collection" add -A

# The lab's default topology under the names the original role gives its inventory (its datacenter DC0, the
# cluster the binding picks DC0_C0): several targets name DC0, DC0_C0 and /DC0/vm/F0 in their task files. The
# objects, hosts and GPUs stay the lab's own; only these two names change. The lab also serves the NFS export the
# binding mounts as ro_datastore.
"$py" - "$root/lab/topologies/default.yml" "$work/topology.yml" <<'PY' || exit 1
import sys
import yaml
with open(sys.argv[1]) as handle:
    topology = yaml.safe_load(handle)
datacenter = topology["datacenters"][0]
datacenter["name"] = "DC0"
first = sorted((c for c in datacenter["clusters"] if c.get("hosts")), key=lambda c: c["name"])[0]
first["name"] = "DC0_C0"
topology["nfs_exports"] = ["nfs.lab.local:/srv/share/isos"]  # the binding's yardstick_nfs
with open(sys.argv[2], "w") as handle:
    yaml.safe_dump(topology, handle)
PY
"$py" "$root/lab/labctl.py" up --no-bmc --topology "$work/topology.yml" --state-dir "$state" --port-offset "$offset" \
    >/dev/null || exit 1
forwarders=()
for listen in "$port" 443; do
    socat TCP-LISTEN:"$listen",bind="$address",fork,reuseaddr TCP:127.0.0.1:"$port" 2>>"$work/logs/socat.log" &
    forwarders+=($!)
done
trap 'kill "${forwarders[@]}" 2>/dev/null; "$py" "$root/lab/labctl.py" down --state-dir "$state" >/dev/null' EXIT

failed=0
for target in "${targets[@]}"; do
    "$py" "$root/lab/labctl.py" reset --state-dir "$state" >/dev/null
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
