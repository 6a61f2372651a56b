package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/chaos"
	"vcsim/faults"
)

// Property collector calls that block until something changes run outside the lab's lock.
var blockingMethods = map[string]bool{
	"WaitForUpdatesEx":     true,
	"WaitForUpdates":       true,
	"CancelWaitForUpdates": true,
}

// Requests whose task and registry hooks need their arguments (see taskHooks).
var hookedMethods = map[string]bool{
	"EnterMaintenanceMode_Task":       true,
	"ReconfigureComputeResource_Task": true,
	"PowerOnMultiVM_Task":             true,
	"CreateClusterEx":                 true,
	"ReconfigureDvs_Task":             true,
	"CreateDVS_Task":                  true,
}

// Handler is the simulated vCenter's HTTP front: SOAP at /sdk, the lab endpoints at /lab/, REST under /api/.
func (l *Lab) Handler(svc *simulator.Service) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/sdk", l.hostdRouter(l.sdkHandler(svc)))
	mux.HandleFunc("/sdk/vimServiceVersions.xml", svc.ServiceVersions)
	mux.HandleFunc("/about", svc.About)
	mux.Handle("/lab/", l.labHandler())
	l.registerREST(svc)
	rest := l.restHandler(l.rest)
	mux.Handle("/api", rest) // vAPI JSON-RPC (vapi/jsonrpc.go)
	mux.Handle("/api/", rest)
	mux.Handle("/rest/", rest)
	return mux
}

// soapCall is what the lab needs to know about a SOAP request before the simulator decodes it.
type soapCall struct {
	method string
	this   types.ManagedObjectReference
}

// scanCall reads the method name and _this of a SOAP request, stopping at _this.
func scanCall(body []byte) soapCall {
	var call soapCall
	dec := xml.NewDecoder(bytes.NewReader(body))
	inBody := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return call
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case !inBody:
			inBody = start.Name.Local == "Body"
		case call.method == "":
			call.method = start.Name.Local
		case start.Name.Local == "_this":
			for _, a := range start.Attr {
				if a.Name.Local == "type" {
					call.this.Type = a.Value
				}
			}
			var value string
			if dec.DecodeElement(&value, &start) == nil {
				call.this.Value = strings.TrimSpace(value)
			}
			return call
		default:
			return call
		}
	}
}

// sdkHandler serves SOAP: it counts the call, applies injected connection drops, and runs the simulator under the
// lab's lock with the request's arguments available to the task hooks.
func (l *Lab) sdkHandler(svc *simulator.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			svc.ServeSDK(w, r)
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		call := scanCall(body)
		l.stats.SOAP(call.method)
		fault := l.chaos.Pick(call.method)
		switch fault {
		case chaos.ResetBefore:
			dropConnection(w)
			return
		case chaos.Unavailable:
			chaos.WriteSOAPUnavailable(w)
			return
		}
		if l.faults.Take(faults.DropConnection, "", call.method) != nil {
			l.logf("dropping the connection of a %s request (injected fault)", call.method)
			dropConnection(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if blockingMethods[call.method] {
			releaseGate(r)
			svc.ServeSDK(w, r)
			return
		}
		rec := &recorder{header: http.Header{}}
		l.serveLocked(svc, rec, r, call, body)
		if fault == chaos.ResetAfter || l.faults.Take(faults.DropAnswer, "", call.method) != nil {
			dropConnection(w) // served, but the answer is lost
			return
		}
		rec.flush(w)
	})
}

func (l *Lab) serveLocked(svc *simulator.Service, rec *recorder, r *http.Request, call soapCall, body []byte) {
	l.mu.Lock()
	defer func() {
		l.current, l.inflight = types.ManagedObjectReference{}, nil
		l.mu.Unlock()
	}()
	defer func() {
		// A few simulator methods type-assert the simulator's own VM type (guest
		// operations, VM performance metric lists); answer with a fault instead of dropping the connection.
		if p := recover(); p != nil {
			l.logf("%s on %s failed inside the simulator: %v\n%s", call.method, call.this.Value, p, debug.Stack())
			*rec = recorder{header: http.Header{}}
			writeSystemError(rec, fmt.Sprintf("%s is not supported by the lab vCenter here (%v)", call.method, p))
		}
	}()
	if call.this.Type == "VirtualMachine" {
		l.vm(call.this) // a VM created through the API becomes a lab VM before its first call
	}
	if hookedMethods[call.method] {
		if method, err := simulator.UnmarshalBody(types.TypeFunc(), body); err == nil {
			l.inflight = method.Body
		}
	}
	l.current = call.this
	if l.refuseWithoutSession(svc, rec, r, call) || l.serveHostConnection(rec, call) || l.serveHostReboot(rec, call) ||
		l.serveResourceUsage(rec, call) ||
		l.serveRefreshDatastore(rec, call) || l.serveClusterDestroy(rec, call) || l.serveSetField(rec, call, body) ||
		l.serveRenameSnapshot(rec, call, body) || l.serveReconfigureCluster(rec, call, body) ||
		l.serveUnregisterAndDestroy(rec, call) || l.serveCreateNasDatastore(rec, call, body) ||
		l.serveDatastoreMaintenance(rec, call) || l.serveFetchDVPorts(rec, call, body) {
		return
	}
	l.escapeNewVMPath(r, call, body)
	l.withSimulatorVM(call, func() { svc.ServeSDK(rec, r) })
	l.rekeyCreatedCluster(rec, call)
	l.patchTaskMessages()
}

// writeSystemError answers a SOAP request with vCenter's SystemError fault.
func writeSystemError(w http.ResponseWriter, reason string) {
	var text bytes.Buffer
	_ = xml.EscapeText(&text, []byte(reason))
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `%s<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" `+
		`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" `+
		`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><soapenv:Fault>`+
		`<faultcode>ServerFaultCode</faultcode><faultstring>A general system error occurred: %s</faultstring>`+
		`<detail><SystemErrorFault xmlns="urn:vim25" xsi:type="SystemError"><reason>%s</reason></SystemErrorFault>`+
		`</detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`, xml.Header, text.String(), text.String())
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

// recorder buffers a response so that the lab's lock is not held while a slow client reads it.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) flush(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
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
			rec := &recorder{header: http.Header{}}
			routes.ServeHTTP(rec, r)
			dropConnection(w)
			return
		}
		routes.ServeHTTP(w, r)
	})
}

// readBody reads a request's whole body, or answers 400 and reports false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return body, true
}
