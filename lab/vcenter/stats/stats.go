// Package stats counts the requests the simulated vCenter serves, for GET /lab/stats.
package stats

import "sync"

// Counters count the requests the simulated vCenter served: SOAP by method, REST by route. The lab endpoints are not
// counted, so tests can read the counters without changing them.
type Counters struct {
	mu          sync.Mutex
	soap        int
	byMethod    map[string]int
	rest        int
	restByRoute map[string]int
}

// Snapshot is the JSON form of the counters.
type Snapshot struct {
	SOAPRequests int            `json:"soap_requests"`
	ByMethod     map[string]int `json:"by_method"`
	RESTRequests int            `json:"rest_requests"`
	RESTByRoute  map[string]int `json:"rest_by_route"`
}

// New answers counters at zero.
func New() *Counters {
	s := &Counters{}
	s.Reset()
	return s
}

func (s *Counters) SOAP(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.soap++
	s.byMethod[method]++
}

func (s *Counters) REST(route string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rest++
	s.restByRoute[route]++
}

func (s *Counters) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.soap, s.rest = 0, 0
	s.byMethod, s.restByRoute = map[string]int{}, map[string]int{}
}

func (s *Counters) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{
		SOAPRequests: s.soap,
		ByMethod:     make(map[string]int, len(s.byMethod)),
		RESTRequests: s.rest,
		RESTByRoute:  make(map[string]int, len(s.restByRoute)),
	}
	for k, v := range s.byMethod {
		snap.ByMethod[k] = v
	}
	for k, v := range s.restByRoute {
		snap.RESTByRoute[k] = v
	}
	return snap
}
