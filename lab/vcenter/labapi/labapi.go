// Package labapi serves the lab's own endpoints under /lab/: the ground truth (/lab/state), request counters,
// injected faults and chaos, the GPUs' nvidia-smi readings, vLCM's depot files and the reset. What it needs of the
// lab is its Lab interface; the lab mounts Handler at /lab/ and Reset at /lab/reset.
package labapi

import (
	"encoding/json"
	"net/http"
	"time"

	"vcsim/chaos"
	"vcsim/faults"
	"vcsim/jsonhttp"
	"vcsim/stats"
	"vcsim/topology"
)

// MaxTemperatureC is beyond every GPU's shutdown temperature: POST /lab/gpus refuses it rather than model a GPU
// that should be off.
const MaxTemperatureC = 120

// Lab is what the endpoints read and change of the lab. State, VMNames and ChangeGPUs take the lab's lock; the
// counters, faults and chaos are safe to use without it.
type Lab interface {
	State() State
	Stats() *stats.Counters
	Faults() *faults.Store
	Chaos() *chaos.Injector
	// VMNames lists the names of the lab's VMs.
	VMNames() []string
	// ChangeGPUs applies a validated POST /lab/gpus body and answers the host's state after it; an error says
	// which host or GPU the lab lacks.
	ChangeGPUs(c GPUChange) (Host, error)
	// DepotFiles serves vLCM's offline depots under /lab/depot/.
	DepotFiles() http.Handler
	Logf(format string, args ...interface{})
}

// GPUChange is the body of POST /lab/gpus: the GPUs of one host (all, or the one pci_id names) get the values given.
type GPUChange struct {
	Host         string `json:"host"`
	PciID        string `json:"pci_id"`
	TemperatureC *int   `json:"temperature_c"`
	ECCMode      string `json:"ecc_mode"`
}

// Handler serves the lab endpoints under /lab/ but /lab/reset.
func Handler(lab Lab) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/lab/state", only(http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
		jsonhttp.Write(w, http.StatusOK, lab.State())
	}))
	mux.HandleFunc("/lab/stats", only(http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
		jsonhttp.Write(w, http.StatusOK, lab.Stats().Snapshot())
	}))
	mux.HandleFunc("/lab/stats/reset", only(http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
		lab.Stats().Reset()
		jsonhttp.Write(w, http.StatusOK, lab.Stats().Snapshot())
	}))
	mux.HandleFunc("/lab/faults", func(w http.ResponseWriter, r *http.Request) { serveFaults(lab, w, r) })
	mux.HandleFunc("/lab/gpus", only(http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
		serveGPUs(lab, w, r)
	}))
	mux.HandleFunc("/lab/chaos", func(w http.ResponseWriter, r *http.Request) { serveChaos(lab, w, r) })
	mux.Handle("/lab/depot/", lab.DepotFiles())
	mux.HandleFunc("/lab/", func(w http.ResponseWriter, r *http.Request) {
		jsonhttp.Error(w, http.StatusNotFound, "no lab endpoint %s (endpoints: /lab/state, /lab/stats, "+
			"/lab/stats/reset, /lab/faults, /lab/gpus, /lab/chaos, /lab/depot/, /lab/reset)", r.URL.Path)
	})
	return mux
}

// Reset serves POST /lab/reset: reset puts the lab back to its start.
func Reset(reset func() error) http.HandlerFunc {
	return only(http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		if err := reset(); err != nil {
			jsonhttp.Error(w, http.StatusServiceUnavailable, "reset: %v", err)
			return
		}
		jsonhttp.Write(w, http.StatusOK, map[string]interface{}{"reset_ms": time.Since(started).Milliseconds()})
	})
}

func only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			jsonhttp.Error(w, http.StatusMethodNotAllowed, "%s takes %s", r.URL.Path, method)
			return
		}
		h(w, r)
	}
}

// decodeStrict reads a JSON body into v; a field v lacks is an error (a typo fails loudly).
func decodeStrict(r *http.Request, v interface{}) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func serveFaults(lab Lab, w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		jsonhttp.Write(w, http.StatusOK, map[string]interface{}{"faults": lab.Faults().List()})
	case http.MethodDelete:
		jsonhttp.Write(w, http.StatusOK, map[string]interface{}{"cleared": lab.Faults().Clear()})
	case http.MethodPost:
		var f faults.Fault
		if err := decodeStrict(r, &f); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "fault: %v", err)
			return
		}
		f.ID = 0
		names := map[string]bool{}
		for _, name := range lab.VMNames() {
			names[name] = true
		}
		if err := f.Validate(func(name string) bool { return names[name] }); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "fault: %v", err)
			return
		}
		added := lab.Faults().Add(f)
		lab.Logf("fault added: %+v", added)
		jsonhttp.Write(w, http.StatusCreated, added)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		jsonhttp.Error(w, http.StatusMethodNotAllowed, "/lab/faults takes GET, POST or DELETE")
	}
}

func serveGPUs(lab Lab, w http.ResponseWriter, r *http.Request) {
	var c GPUChange
	if err := decodeStrict(r, &c); err != nil {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: %v (body: host, optional pci_id, temperature_c, ecc_mode)", err)
		return
	}
	if c.TemperatureC == nil && c.ECCMode == "" {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: give temperature_c or ecc_mode")
		return
	}
	if c.TemperatureC != nil && (*c.TemperatureC < 0 || *c.TemperatureC > MaxTemperatureC) {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: temperature_c %d is outside 0 to %d", *c.TemperatureC,
			MaxTemperatureC)
		return
	}
	if c.ECCMode != "" && c.ECCMode != topology.ECCEnabled && c.ECCMode != topology.ECCDisabled {
		jsonhttp.Error(w, http.StatusBadRequest, "gpus: ecc_mode %q is not %s or %s", c.ECCMode, topology.ECCEnabled, topology.ECCDisabled)
		return
	}
	host, err := lab.ChangeGPUs(c)
	if err != nil {
		jsonhttp.Error(w, http.StatusNotFound, "gpus: %v", err)
		return
	}
	jsonhttp.Write(w, http.StatusOK, host)
}

func serveChaos(lab Lab, w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		jsonhttp.Write(w, http.StatusOK, lab.Chaos().Report())
	case http.MethodDelete:
		jsonhttp.Write(w, http.StatusOK, lab.Chaos().Stop())
	case http.MethodPost:
		var cfg chaos.Config
		if err := decodeStrict(r, &cfg); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "chaos: %v", err)
			return
		}
		if err := cfg.Validate(); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "chaos: %v", err)
			return
		}
		lab.Chaos().Start(cfg)
		lab.Logf("chaos on: %+v", cfg)
		jsonhttp.Write(w, http.StatusCreated, lab.Chaos().Report())
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		jsonhttp.Error(w, http.StatusMethodNotAllowed, "/lab/chaos takes GET, POST or DELETE")
	}
}
