// Package faults holds the faults a test injects through /lab/faults: each is used up by the requests it
// applies to.
package faults

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"vcsim/lists"
)

const (
	FailReconfigure = "fail_reconfigure" // the next ReconfigVM_Task of the VM fails with SystemError
	DropConnection  = "drop_connection"  // the next SOAP request's connection closes without an answer
	DropAnswer      = "drop_answer"      // the next SOAP request is served, then its connection closes unanswered
	ShutdownIgnored = "shutdown_ignored" // ShutdownGuest succeeds but the guest never shuts down
	ShutdownDelay   = "shutdown_delay"   // the guest takes delay_ms to shut down
	// FailRemediation: the next vLCM remediation of the host fails while installing the image; the host keeps
	// what it ran and stays in maintenance mode.
	FailRemediation = "fail_remediation"

	maxShutdownDelayMS = 600000
)

var faultKinds = []string{FailReconfigure, DropConnection, DropAnswer, ShutdownIgnored,
	ShutdownDelay, FailRemediation}

// Fault is an injected fault, as POST /lab/faults takes it and GET /lab/faults lists it.
type Fault struct {
	ID   int    `json:"id"`
	Kind string `json:"kind"`
	VM   string `json:"vm,omitempty"`
	// Host names the host of fail_remediation.
	Host string `json:"host,omitempty"`
	// Method limits drop_connection to SOAP requests of that method (e.g. ReconfigVM_Task); empty means any.
	Method string `json:"method,omitempty"`
	// Count is the number of uses left; 0 means until DELETE /lab/faults (shutdown_ignored, shutdown_delay).
	Count   int    `json:"count"`
	Message string `json:"message,omitempty"`
	DelayMS *int   `json:"delay_ms,omitempty"`
}

// Store holds the pending faults; each fault is used up by the requests it applies to.
type Store struct {
	mu     sync.Mutex
	nextID int
	faults []*Fault
}

// NewStore answers an empty store.
func NewStore() *Store {
	return &Store{nextID: 1}
}

// Validate checks a fault before it is added; knownVM tells whether a VM of that name exists.
func (f *Fault) Validate(knownVM func(string) bool) error {
	if !lists.Contains(faultKinds, f.Kind) {
		return fmt.Errorf("kind %q is not one of %s", f.Kind, strings.Join(faultKinds, ", "))
	}
	switch f.Kind {
	case FailReconfigure, ShutdownIgnored:
		if f.VM == "" {
			return fmt.Errorf("%s needs \"vm\"", f.Kind)
		}
	case DropConnection, DropAnswer:
		if f.VM != "" {
			return fmt.Errorf("%s applies to any SOAP request and takes no \"vm\"", f.Kind)
		}
	case FailRemediation:
		if f.Host == "" || f.VM != "" {
			return fmt.Errorf("%s needs \"host\" and takes no \"vm\"", f.Kind)
		}
	}
	if f.Host != "" && f.Kind != FailRemediation {
		return fmt.Errorf("\"host\" only applies to %s", FailRemediation)
	}
	if f.Method != "" && f.Kind != DropConnection && f.Kind != DropAnswer {
		return fmt.Errorf("\"method\" applies only to %s and %s", DropConnection, DropAnswer)
	}
	if f.VM != "" && !knownVM(f.VM) {
		return fmt.Errorf("no VM named %q", f.VM)
	}
	switch f.Kind {
	case FailReconfigure, DropConnection, DropAnswer, FailRemediation:
		if f.Count == 0 {
			f.Count = 1
		}
		if f.Count < 1 {
			return fmt.Errorf("count must be at least 1, got %d", f.Count)
		}
	default:
		if f.Count < 0 {
			return fmt.Errorf("count must be 0 (until cleared) or more, got %d", f.Count)
		}
	}
	if f.Kind == ShutdownDelay {
		if f.DelayMS == nil || *f.DelayMS < 0 || *f.DelayMS > maxShutdownDelayMS {
			return fmt.Errorf("%s needs \"delay_ms\" between 0 and %d", f.Kind, maxShutdownDelayMS)
		}
	} else if f.DelayMS != nil {
		return fmt.Errorf("\"delay_ms\" only applies to %s", ShutdownDelay)
	}
	if f.Message != "" && f.Kind != FailReconfigure {
		return fmt.Errorf("\"message\" only applies to %s", FailReconfigure)
	}
	return nil
}

// Add stores a validated fault and returns it with its id.
func (s *Store) Add(f Fault) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.ID = s.nextID
	s.nextID++
	s.faults = append(s.faults, &f)
	return f
}

// Take uses up one application of the first pending fault of the kind for the VM ("" for any VM) and the SOAP
// method ("" when not a SOAP request), or returns nil.
func (s *Store) Take(kind, vm, method string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		target := f.VM
		if f.Host != "" {
			target = f.Host
		}
		if f.Kind != kind || (target != "" && target != vm) || (f.Method != "" && f.Method != method) {
			continue
		}
		taken := *f
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
		}
		return &taken
	}
	return nil
}

// ShutdownDelay is how long the VM's guest takes to shut down.
func (s *Store) ShutdownDelay(vm string, fallback time.Duration) time.Duration {
	if f := s.Take(ShutdownDelay, vm, ""); f != nil {
		return time.Duration(*f.DelayMS) * time.Millisecond
	}
	return fallback
}

// List answers the pending faults.
func (s *Store) List() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]Fault, len(s.faults))
	for i, f := range s.faults {
		list[i] = *f
	}
	return list
}

// Clear removes every pending fault and answers how many there were.
func (s *Store) Clear() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.faults)
	s.faults = nil
	return n
}
