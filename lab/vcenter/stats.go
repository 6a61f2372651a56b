package main

import "sync"

// Stats counts the requests the simulated vCenter served: SOAP by method, REST by route. The lab endpoints are not
// counted, so tests can read the counters without changing them.
type Stats struct {
	mu          sync.Mutex
	soap        int
	byMethod    map[string]int
	rest        int
	restByRoute map[string]int
}

// StatsSnapshot is the JSON form of the counters.
type StatsSnapshot struct {
	SOAPRequests int            `json:"soap_requests"`
	ByMethod     map[string]int `json:"by_method"`
	RESTRequests int            `json:"rest_requests"`
	RESTByRoute  map[string]int `json:"rest_by_route"`
}

func NewStats() *Stats {
	s := &Stats{}
	s.Reset()
	return s
}

func (s *Stats) SOAP(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.soap++
	s.byMethod[method]++
}

func (s *Stats) REST(route string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rest++
	s.restByRoute[route]++
}

func (s *Stats) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.soap, s.rest = 0, 0
	s.byMethod, s.restByRoute = map[string]int{}, map[string]int{}
}

func (s *Stats) Snapshot() StatsSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := StatsSnapshot{
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
