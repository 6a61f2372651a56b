#!/usr/bin/env python3
"""The closing note of `make soak`: kill points and chaos seeds tried, whether each converged, and the figures."""

import json
import sys


def main(path):
    try:
        with open(path) as handle:
            trials = [json.loads(line) for line in handle if line.strip()]
    except IOError:
        trials = []
    playbooks = {"crash": "site.yml", "guest_crash": "guests.yml", "servers_crash": "servers.yml"}
    crashes = [trial for trial in trials if trial["kind"] in playbooks]
    storms = [trial for trial in trials if trial["kind"] == "chaos"]
    print("soak: %d kill points, %d converged (runs after the kill: %s)" % (
        len(crashes), sum(1 for trial in crashes if trial["converged"]),
        ", ".join(str(trial["runs"]) for trial in crashes) or "none"))
    for trial in crashes:
        print("  %(what)s seed %(seed)d: killed %(delay)s s into task %(kill_at)d %(task)s -> %(runs)d run(s), "
              "converged %(converged)s" % dict(trial, task=trial["task"] or "(the run ended first)",
                                               what=playbooks[trial["kind"]]))
    print("soak: %d chaos seeds, %d converged; %d of %d requests failed (reset or 503), %d sent again by the modules; "
          "runs to converge: %s" % (
              len(storms), sum(1 for trial in storms if trial["converged"]), sum(trial["dropped"] for trial in storms),
              sum(trial["requests"] for trial in storms), sum(trial.get("retried", 0) for trial in storms),
              ", ".join(str(trial["runs"]) for trial in storms) or "none"))
    for trial in storms:
        print("  chaos seed %(seed)d: %(dropped)d of %(requests)d requests failed, %(retried)d sent again, run under "
              "chaos succeeded: %(stormy_run_ok)s, runs to converge %(runs)d, converged %(converged)s; faults %(faults)s"
              % dict(trial, retried=trial.get("retried", 0)))
    layer_kills = [trial for trial in trials if trial["kind"] == "layer_kill"]
    print("soak: %d kills inside the tasks that take something away, %d converged" % (
        len(layer_kills), sum(1 for trial in layer_kills if trial["converged"])))
    for trial in layer_kills:
        print("  %(layer)s seed %(seed)d: killed %(delay)s s into %(task)s -> %(runs)d run(s), converged %(converged)s"
              % trial)
    vm_kills = [trial for trial in trials if trial["kind"] == "vm_crash"]
    print("soak: %d kills inside the VM layer (vm_vgpu on %s running VMs), %d converged; VMs left off after the "
          "next successful run: %d" % (len(vm_kills), ", ".join(sorted(set(str(t.get("vms", "?")) for t in vm_kills))) or "no",
                                       sum(1 for trial in vm_kills if trial["converged"]),
                                       sum(trial["vms_left_off"] for trial in vm_kills)))
    for trial in vm_kills:
        print("  VM layer seed %(seed)d%(chaos)s: killed %(delay)s s in%(ended)s, %(off_after_kill)d VM(s) off "
              "after the kill -> %(runs)d run(s), recovered per run %(recovered)s, VMs left off %(vms_left_off)d, "
              "converged %(converged)s" % dict(
                  trial, chaos=" under chaos" if trial["chaos"] else "",
                  ended=" (the run had ended after %s s)" % trial["ended_before_kill"]
                  if trial["ended_before_kill"] else ""))
    return 0 if trials and all(trial["converged"] for trial in trials) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
