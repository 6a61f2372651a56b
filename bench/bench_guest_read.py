#!/usr/bin/env python3
"""What a gpu_guest_info read with ``reuse`` costs on one lab guest over SSH, against a read that runs the module.

Three plays on the same guest, each ``--reps`` times: one read alone, the read followed by ``--reads`` reads that it
covers (each answered from the kept read after the guest's fingerprint, one shell command), and the read followed
by as many reads without ``reuse`` (each a module run). Prints the wall times and the seconds per covered read and
per module read (the difference to the read alone, over ``--reads``, fastest run of each), as JSON.
Not part of `make bench`; run it with LAB_PORT_OFFSET set to the offset of a lab of its own.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from guest_run import PLAYBOOK, lab_guest  # noqa: E402

READ = {"gather": ["os", "driver", "cuda"], "files": ["/etc/os-release"], "services": ["ssh"]}


def play(reads, reuse):
    first = {"name": "Read the guest", "gpuops.vgpu.gpu_guest_info": dict(READ, reuse=True)}
    again = [{"name": "Read it again (%d)" % number, "gpuops.vgpu.gpu_guest_info": dict(READ, reuse=reuse)}
             for number in range(reads)]
    return [{"name": "Reads", "hosts": "all", "gather_facts": False, "tasks": [first] + again}]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=20)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"))
    seconds = {}
    with lab_guest("bench-read-guest", 117) as guest:
        for _rep in range(options.reps):
            for label, reads, reuse in (("alone", 0, True), ("covered", options.reads, True),
                                        ("module", options.reads, False)):
                path = os.path.join(guest["state_dir"], "bench-read-%s.yml" % label)
                with open(path, "w") as handle:
                    json.dump(play(reads, reuse), handle)
                started = time.time()
                subprocess.run([PLAYBOOK, "-i", guest["inventory"], path], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                seconds.setdefault(label, []).append(round(time.time() - started, 2))
    alone = min(seconds["alone"])
    print(json.dumps({"wall_s": seconds, "reads": options.reads,
                      "per_covered_read_s": round((min(seconds["covered"]) - alone) / options.reads, 3),
                      "per_module_read_s": round((min(seconds["module"]) - alone) / options.reads, 3)}, indent=1))


if __name__ == "__main__":
    main()
