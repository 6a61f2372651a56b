package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/chaos"
	"vcsim/clusters"
	"vcsim/dvs"
	"vcsim/faults"
	"vcsim/folders"
	"vcsim/hostd"
	"vcsim/labapi"
	"vcsim/soaphttp"
	"vcsim/vcmanagers"
)

// Property collector calls that block until something changes run outside the lab's lock.
var blockingMethods = map[string]bool{
	"WaitForUpdatesEx":     true,
	"WaitForUpdates":       true,
	"CancelWaitForUpdates": true,
}

// Requests whose task and registry hooks need their arguments (see taskHooks), the lab's and its packages'.
var hookedMethods = methodSet([]string{"EnterMaintenanceMode_Task", "PowerOnMultiVM_Task"}, clusters.RequestsRead,
	dvs.RequestsRead)

func methodSet(lists ...[]string) map[string]bool {
	set := map[string]bool{}
	for _, list := range lists {
		for _, method := range list {
			set[method] = true
		}
	}
	return set
}

// Handler is the simulated vCenter's HTTP front: SOAP at /sdk, the lab endpoints at /lab/, REST under /api/.
func (l *Lab) Handler(svc *simulator.Service) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/sdk", hostd.Router(hostdLab{l}, l.sdkHandler(svc)))
	mux.HandleFunc("/sdk/vimServiceVersions.xml", svc.ServiceVersions)
	mux.HandleFunc("/about", svc.About)
	mux.Handle("/lab/", labapi.Handler(labapiLab{l}))
	l.registerREST(svc)
	rest := l.restHandler(l.rest)
	mux.Handle("/api", rest) // vAPI JSON-RPC (vapi/jsonrpc.go)
	mux.Handle("/api/", rest)
	mux.Handle("/rest/", rest)
	return mux
}

// sdkHandler serves SOAP: it counts the call, applies injected connection drops, and runs the simulator under the
// lab's lock with the request's arguments available to the task hooks.
func (l *Lab) sdkHandler(svc *simulator.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			svc.ServeSDK(w, r)
			return
		}
		body, ok := soaphttp.ReadBody(w, r)
		if !ok {
			return
		}
		call := soaphttp.ScanCall(body)
		l.stats.SOAP(call.Method)
		fault := l.chaos.Pick(call.Method)
		switch fault {
		case chaos.ResetBefore:
			dropConnection(w)
			return
		case chaos.Unavailable:
			chaos.WriteSOAPUnavailable(w)
			return
		}
		if l.faults.Take(faults.DropConnection, "", call.Method) != nil {
			l.logf("dropping the connection of a %s request (injected fault)", call.Method)
			dropConnection(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if blockingMethods[call.Method] {
			releaseGate(r)
			svc.ServeSDK(w, r)
			return
		}
		rec := soaphttp.NewRecorder()
		l.serveLocked(svc, rec, r, call, body)
		if fault == chaos.ResetAfter || l.faults.Take(faults.DropAnswer, "", call.Method) != nil {
			dropConnection(w) // served, but the answer is lost
			return
		}
		rec.Flush(w)
	})
}

func (l *Lab) serveLocked(svc *simulator.Service, rec *soaphttp.Recorder, r *http.Request, call soaphttp.Call, body []byte) {
	l.mu.Lock()
	defer func() {
		l.current, l.inflight, l.caller = types.ManagedObjectReference{}, nil, ""
		l.eventLog.Drain(l.ctx)
		l.mu.Unlock()
	}()
	defer func() {
		// A few simulator methods type-assert the simulator's own VM type (guest
		// operations, VM performance metric lists); answer with a fault instead of dropping the connection.
		if p := recover(); p != nil {
			l.logf("%s on %s failed inside the simulator: %v\n%s", call.Method, call.This.Value, p, debug.Stack())
			*rec = *soaphttp.NewRecorder()
			soaphttp.WriteSystemError(rec, fmt.Sprintf("%s is not supported by the lab vCenter here (%v)", call.Method, p))
		}
	}()
	if call.This.Type == "VirtualMachine" {
		l.vm(call.This) // a VM created through the API becomes a lab VM before its first call
	}
	if hookedMethods[call.Method] {
		if method, err := simulator.UnmarshalBody(types.TypeFunc(), body); err == nil {
			l.inflight = method.Body
		}
	}
	l.current = call.This
	l.caller = l.callerOf(svc, r, call)
	if l.refuseWithoutSession(svc, rec, r, call) || l.serveHostConnection(rec, call) || l.serveHostReboot(rec, call) ||
		l.datastores.Serve(rec, call, body) || l.clusterSettings.Serve(rec, call, body) ||
		vcmanagers.ServeSetField(rec, call, body) || l.serveRenameSnapshot(rec, call, body) ||
		folders.Serve(folderLab{labView{l}}, rec, call) ||
		l.switches.Serve(rec, call, body) || l.eventLog.Serve(l.ctx, rec, call, body) {
		return
	}
	l.escapeNewVMPath(r, call, body)
	l.withSimulatorVM(call, func() { svc.ServeSDK(rec, r) })
	l.rekeyCreatedCluster(rec, call)
	l.patchTaskMessages()
}

func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // closes the connection without a response
}

// restHandler counts REST requests by the route pattern that serves them.
func (l *Lab) restHandler(routes *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := routes.Handler(r)
		if router, ok := h.(interface{ Route(*http.Request) string }); ok {
			pattern = router.Route(r)
		} else if pattern == "" {
			pattern = r.URL.Path
		}
		l.stats.REST(r.Method + " " + pattern)
		switch l.chaos.Pick(r.Method + " " + pattern) {
		case chaos.ResetBefore:
			dropConnection(w)
			return
		case chaos.Unavailable:
			chaos.WriteRESTUnavailable(w)
			return
		case chaos.ResetAfter:
			rec := soaphttp.NewRecorder()
			routes.ServeHTTP(rec, r)
			dropConnection(w)
			return
		}
		routes.ServeHTTP(w, r)
	})
}
