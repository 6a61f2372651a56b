package main

// What the ESXi host's own nvidia-smi (the vGPU manager's, lab/hosts) reads beyond vSphere's view: ECC mode,
// core temperature and NVLink bridges per GPU. POST /lab/gpus stages them.

import (
	"sort"

	"vcsim/topology"
)

// An idle passive datacenter GPU in a cooled server; the value is the lab's choice.
const idleTemperatureC = 34

func eccWord(on bool) string {
	if on {
		return topology.ECCEnabled
	}
	return topology.ECCDisabled
}

// linkGPUs joins the NVLink sets of a validated topology: every GPU of a set links to every other.
func (h *hostState) linkGPUs(sets [][]int) {
	for _, set := range sets {
		for _, i := range set {
			for _, j := range set {
				if i != j {
					h.gpus[i].nvlinkPeers = append(h.gpus[i].nvlinkPeers, h.gpus[j])
				}
			}
		}
	}
}

func (h *hostState) nvlinkPairs() [][]string {
	pairs := [][]string{}
	for _, g := range h.gpus {
		for _, peer := range g.nvlinkPeers {
			if g.bus < peer.bus {
				pairs = append(pairs, []string{g.pciID, peer.pciID})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return pairs
}
