package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"sync"
	"time"

	"vcsim/lists"
)

// Chaos: for a while, a seeded share of SOAP and REST requests fails the way a bad network or an overloaded vCenter
// fails them. The same seed and the same sequence of requests give the same faults, so a failing run replays.
//
//   - reset_before: the connection closes before vCenter reads the request; nothing was done.
//   - reset_after:  vCenter serves the request (a change is applied), then the connection closes before the
//     answer; the client cannot tell whether it was done.
//   - unavailable:  HTTP 503 from vCenter's reverse proxy, which answers so when the service behind it is down:
//     "503 Service Unavailable (Failed to connect to endpoint: ... _serverNamespace = /sdk ...)" from rhttpproxy
//     (Broadcom KB 344908 shows the form for /websso; the /sdk namespace and port 8085 are the lab's, unconfirmed)
//     and "no healthy upstream" from the envoy proxy of vCenter 8 for the REST APIs.
const (
	chaosResetBefore = "reset_before"
	chaosResetAfter  = "reset_after"
	chaosUnavailable = "unavailable"
)

var chaosKinds = []string{chaosResetBefore, chaosResetAfter, chaosUnavailable}

// ChaosConfig is what POST /lab/chaos takes.
type ChaosConfig struct {
	Seed    int64    `json:"seed"`
	Rate    float64  `json:"rate"`
	Seconds float64  `json:"seconds"`
	Kinds   []string `json:"kinds,omitempty"`
}

// ChaosReport is what GET /lab/chaos answers: the configuration and what it did so far.
type ChaosReport struct {
	Active   bool           `json:"active"`
	Config   *ChaosConfig   `json:"config"`
	Until    string         `json:"until,omitempty"`
	Requests int            `json:"requests"`
	Faults   map[string]int `json:"faults"`
	ByMethod map[string]int `json:"by_method"`
}

type chaos struct {
	mu       sync.Mutex
	config   *ChaosConfig
	until    time.Time
	rng      *rand.Rand
	requests int
	faults   map[string]int
	byMethod map[string]int
}

func newChaos() *chaos {
	return &chaos{faults: map[string]int{}, byMethod: map[string]int{}}
}

func (c *ChaosConfig) validate() error {
	if c.Rate < 0 || c.Rate > 1 {
		return fmt.Errorf("rate %v is not a share between 0 and 1", c.Rate)
	}
	if c.Seconds <= 0 {
		return fmt.Errorf("seconds %v: give how long the chaos lasts, more than 0", c.Seconds)
	}
	if len(c.Kinds) == 0 {
		c.Kinds = chaosKinds
	}
	for _, k := range c.Kinds {
		if !lists.Contains(chaosKinds, k) {
			return fmt.Errorf("kind %q is not one of %v", k, chaosKinds)
		}
	}
	return nil
}

func (c *chaos) start(cfg ChaosConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.config, c.until = &cfg, time.Now().Add(time.Duration(cfg.Seconds*float64(time.Second)))
	c.rng = rand.New(rand.NewSource(cfg.Seed))
	c.requests, c.faults, c.byMethod = 0, map[string]int{}, map[string]int{}
}

func (c *chaos) stop() ChaosReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.until = time.Time{}
	return c.reportLocked()
}

func (c *chaos) report() ChaosReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reportLocked()
}

func (c *chaos) reportLocked() ChaosReport {
	r := ChaosReport{Active: time.Now().Before(c.until), Config: c.config, Requests: c.requests,
		Faults: map[string]int{}, ByMethod: map[string]int{}}
	if r.Active {
		r.Until = c.until.UTC().Format(time.RFC3339)
	}
	for k, v := range c.faults {
		r.Faults[k] = v
	}
	for k, v := range c.byMethod {
		r.ByMethod[k] = v
	}
	return r
}

// pick draws the fault for one request of method: "" for none.
func (c *chaos) pick(method string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rng == nil || !time.Now().Before(c.until) {
		return ""
	}
	c.requests++
	draw, which := c.rng.Float64(), c.rng.Intn(len(c.config.Kinds))
	if draw >= c.config.Rate {
		return ""
	}
	kind := c.config.Kinds[which]
	c.faults[kind]++
	c.byMethod[method+" "+kind]++
	return kind
}

func writeSOAPUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, "503 Service Unavailable (Failed to connect to endpoint: [N7Vmacore4Http20NamedPipeServiceSpecE:"+
		"0x000055d5c3a1e0a0] _serverNamespace = /sdk action = Allow _pipeName =/var/run/envoy-hgw/hgw-pipe)")
}

func writeRESTUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, "no healthy upstream")
}

func (l *Lab) chaosEndpoint(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, l.chaos.report())
	case http.MethodDelete:
		writeJSON(w, http.StatusOK, l.chaos.stop())
	case http.MethodPost:
		var cfg ChaosConfig
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			writeError(w, http.StatusBadRequest, "chaos: %v", err)
			return
		}
		if err := cfg.validate(); err != nil {
			writeError(w, http.StatusBadRequest, "chaos: %v", err)
			return
		}
		l.chaos.start(cfg)
		l.logf("chaos on: %+v", cfg)
		writeJSON(w, http.StatusCreated, l.chaos.report())
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, "/lab/chaos takes GET, POST or DELETE")
	}
}
