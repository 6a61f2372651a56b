package main

// What the ESXi host's own nvidia-smi (the vGPU manager's, lab/hosts) reads beyond vSphere's view: ECC mode,
// core temperature and NVLink bridges per GPU. POST /lab/gpus stages them.

import (
	"sort"

	"vcsim/topology"
)

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
					h.GPUs[i].NVLinkPeers = append(h.GPUs[i].NVLinkPeers, h.GPUs[j])
				}
			}
		}
	}
}

func (h *hostState) nvlinkPairs() [][]string {
	pairs := [][]string{}
	for _, g := range h.GPUs {
		for _, peer := range g.NVLinkPeers {
			if g.Bus < peer.Bus {
				pairs = append(pairs, []string{g.PciID, peer.PciID})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return pairs
}
