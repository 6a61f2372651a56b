package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"

	"vcsim/labapi"
)

// How long a reset waits for the background work of the lab it replaces (REST tasks, guest shutdowns) to end.
const retireTimeout = 30 * time.Second

// labServer serves one lab at a time and puts it back to its start on POST /lab/reset: it builds the topology again
// in a fresh simulator, in this process and on the same listener, which takes milliseconds where a restart of the
// process takes seconds. The new lab has the start's inventory, managed object ids, graphics configuration, vLCM
// state, no faults, zeroed counters and no sessions: clients log in again.
type labServer struct {
	build func() (*Lab, *simulator.Service, error)

	// gate: every request holds it for reading while the lab serves it (property collector waits let go of it as
	// soon as they start waiting); a reset holds it for writing, so it never swaps the lab under a request.
	gate    sync.RWMutex
	lab     *Lab
	handler http.Handler
	// depot serves files that a reset does not change, outside the gate: a REST task that the reset waits for may
	// be downloading one of them.
	depot http.Handler
}

type releaseKey struct{}

func newLabServer(build func() (*Lab, *simulator.Service, error)) (*labServer, error) {
	l, svc, err := build()
	if err != nil {
		return nil, err
	}
	return &labServer{build: build, lab: l, handler: l.Handler(svc), depot: l.vlcm.DepotFiles()}, nil
}

func (s *labServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/lab/reset":
		labapi.Reset(s.reset)(w, r)
		return
	case strings.HasPrefix(r.URL.Path, "/lab/depot/"):
		s.depot.ServeHTTP(w, r)
		return
	}
	s.gate.RLock()
	var once sync.Once
	release := func() { once.Do(s.gate.RUnlock) }
	defer release()
	s.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), releaseKey{}, release)))
}

// releaseGate lets a request that is about to block (a property collector wait) go on without holding up a reset.
func releaseGate(r *http.Request) {
	if release, ok := r.Context().Value(releaseKey{}).(func()); ok {
		release()
	}
}

func (s *labServer) reset() error {
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.lab.retire(retireTimeout); err != nil {
		return err
	}
	l, svc, err := s.build()
	if err != nil {
		return err
	}
	s.lab, s.handler = l, l.Handler(svc)
	l.logf("lab reset: %d hosts, %d VMs as the topology gives them", len(l.hosts), len(l.vms))
	return nil
}

// retire ends the lab's background work before another lab takes its place: pauses (a remediation's install, a
// guest's shutdown) end at once, and the work they belong to gives up. Until it has ended the simulator's objects
// stay this lab's, as the simulator keeps them in one registry for the whole process.
func (l *Lab) retire(timeout time.Duration) error {
	l.mu.Lock()
	if !l.isRetired() {
		close(l.retiring)
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() {
		l.background.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("the background work of the lab did not end within %s", timeout)
	}
}

func (l *Lab) isRetired() bool {
	select {
	case <-l.retiring:
		return true
	default:
		return false
	}
}

// pause waits d; it returns false when the lab is retired meanwhile.
func (l *Lab) pause(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-l.retiring:
		return false
	}
}

// later runs f holding l.mu after d, unless the lab is retired first.
func (l *Lab) later(d time.Duration, f func()) {
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		if !l.pause(d) {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.isRetired() {
			f()
		}
	}()
}
