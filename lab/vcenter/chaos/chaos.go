package chaos

import (
	"fmt"
	"math/rand"
	"net/http"
	"sync"
	"time"

	"vcsim/lists"
)

// Package chaos makes, for a while, a seeded share of SOAP and REST requests fails the way a bad network or an overloaded vCenter
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
	ResetBefore = "reset_before"
	ResetAfter  = "reset_after"
	Unavailable = "unavailable"
)

var kinds = []string{ResetBefore, ResetAfter, Unavailable}

// Config is what POST /lab/chaos takes.
type Config struct {
	Seed    int64    `json:"seed"`
	Rate    float64  `json:"rate"`
	Seconds float64  `json:"seconds"`
	Kinds   []string `json:"kinds,omitempty"`
}

// Report is what GET /lab/chaos answers: the configuration and what it did so far.
type Report struct {
	Active   bool           `json:"active"`
	Config   *Config        `json:"config"`
	Until    string         `json:"until,omitempty"`
	Requests int            `json:"requests"`
	Faults   map[string]int `json:"faults"`
	ByMethod map[string]int `json:"by_method"`
}

// Injector draws the faults of the configured chaos, request by request.
type Injector struct {
	mu       sync.Mutex
	config   *Config
	until    time.Time
	rng      *rand.Rand
	requests int
	faults   map[string]int
	byMethod map[string]int
}

// New answers an injector that injects nothing until Start.
func New() *Injector {
	return &Injector{faults: map[string]int{}, byMethod: map[string]int{}}
}

// Validate checks a configuration, defaulting the kinds to all of them.
func (c *Config) Validate() error {
	if c.Rate < 0 || c.Rate > 1 {
		return fmt.Errorf("rate %v is not a share between 0 and 1", c.Rate)
	}
	if c.Seconds <= 0 {
		return fmt.Errorf("seconds %v: give how long the chaos lasts, more than 0", c.Seconds)
	}
	if len(c.Kinds) == 0 {
		c.Kinds = kinds
	}
	for _, k := range c.Kinds {
		if !lists.Contains(kinds, k) {
			return fmt.Errorf("kind %q is not one of %v", k, kinds)
		}
	}
	return nil
}

// Start injects faults as cfg says, from now on.
func (c *Injector) Start(cfg Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.config, c.until = &cfg, time.Now().Add(time.Duration(cfg.Seconds*float64(time.Second)))
	c.rng = rand.New(rand.NewSource(cfg.Seed))
	c.requests, c.faults, c.byMethod = 0, map[string]int{}, map[string]int{}
}

// Stop ends the chaos and answers what it did.
func (c *Injector) Stop() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.until = time.Time{}
	return c.reportLocked()
}

// Report answers the configuration and what it did so far.
func (c *Injector) Report() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reportLocked()
}

func (c *Injector) reportLocked() Report {
	r := Report{Active: time.Now().Before(c.until), Config: c.config, Requests: c.requests,
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

// Pick draws the fault for one request of method: "" for none.
func (c *Injector) Pick(method string) string {
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

// WriteSOAPUnavailable answers a SOAP request as vCenter's reverse proxy does when the service is down.
func WriteSOAPUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, "503 Service Unavailable (Failed to connect to endpoint: [N7Vmacore4Http20NamedPipeServiceSpecE:"+
		"0x000055d5c3a1e0a0] _serverNamespace = /sdk action = Allow _pipeName =/var/run/envoy-hgw/hgw-pipe)")
}

// WriteRESTUnavailable answers a REST request as vCenter 8's envoy proxy does when the service is down.
func WriteRESTUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, "no healthy upstream")
}
