package main

// What the ESXi host's own nvidia-smi (the vGPU manager's, lab/hosts) reads beyond vSphere's view: ECC mode,
// core temperature and NVLink bridges per GPU. POST /lab/gpus stages them.

import (
	"encoding/json"
	"net/http"
	"sort"

	"vcsim/jsonhttp"
	"vcsim/topology"
)

const (
	// An idle passive datacenter GPU in a cooled server; the value is the lab's choice.
	idleTemperatureC = 34
	// Beyond every GPU's shutdown temperature: the lab refuses it rather than model a GPU that should be off.
	maxTemperatureC = 120
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

// gpuChange is the body of POST /lab/gpus: the GPUs of one host (all, or the one pci_id names) get the values given.
type gpuChange struct {
	Host         string `json:"host"`
	PciID        string `json:"pci_id"`
	TemperatureC *int   `json:"temperature_c"`
	ECCMode      string `json:"ecc_mode"`
}

func (l *Lab) gpusEndpoint(w http.ResponseWriter, r *http.Request) {
	var c gpuChange
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: %v (body: host, optional pci_id, temperature_c, ecc_mode)", err)
		return
	}
	if c.TemperatureC == nil && c.ECCMode == "" {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: give temperature_c or ecc_mode")
		return
	}
	if c.TemperatureC != nil && (*c.TemperatureC < 0 || *c.TemperatureC > maxTemperatureC) {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: temperature_c %d is outside 0 to %d", *c.TemperatureC,
			maxTemperatureC)
		return
	}
	if c.ECCMode != "" && c.ECCMode != topology.ECCEnabled && c.ECCMode != topology.ECCDisabled {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: ecc_mode %q is not %s or %s", c.ECCMode, topology.ECCEnabled, topology.ECCDisabled)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var host *hostState
	for _, h := range l.hosts {
		if h.name == c.Host {
			host = h
		}
	}
	if host == nil {
		jsonhttp.Error(w, http.StatusNotFound, "gpus: no host %q in the lab", c.Host)
		return
	}
	gpus := host.gpus
	if c.PciID != "" {
		g := host.gpu(c.PciID)
		if g == nil {
			jsonhttp.Error(w, http.StatusNotFound, "gpus: host %s has no GPU %q (it has %s)", c.Host, c.PciID,
				host.pciIDs())
			return
		}
		gpus = []*gpuDevice{g}
	}
	for _, g := range gpus {
		if c.TemperatureC != nil {
			g.temperatureC = *c.TemperatureC
		}
		if c.ECCMode != "" {
			g.ecc = c.ECCMode == topology.ECCEnabled
		}
		l.logf("host %s: GPU %s now at %d C, ECC %s", host.name, g.pciID, g.temperatureC, eccWord(g.ecc))
	}
	obj := l.hostObject(host.ref)
	jsonhttp.Write(w, http.StatusOK, host.state(obj))
}
