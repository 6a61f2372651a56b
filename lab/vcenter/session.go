package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/vmware/govmomi/simulator"

	"vcsim/folders"
	"vcsim/soaphttp"
)

// labServedMethods are the SOAP methods the lab answers itself, before the simulator's dispatcher (and so before
// its session check) sees them.
var labServedMethods = map[string]bool{"GetResourceUsage": true, "RefreshDatastore": true,
	folders.Method:       true,
	"CreateNasDatastore": true}

func init() {
	for method := range hostConnectionMethods {
		labServedMethods[method] = true
	}
}

// sessionProbe is a request every vCenter refuses without a logged-in session (ServiceInstance.CurrentTime).
const sessionProbe = `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope ` +
	`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><CurrentTime xmlns="urn:vim25">` +
	`<_this type="ServiceInstance">ServiceInstance</_this></CurrentTime></soapenv:Body></soapenv:Envelope>`

// refuseWithoutSession answers a lab-served method called without a session as vCenter does: a NotAuthenticated
// fault naming the object and the System.View privilege (vSphere Web Services API, NotAuthenticated, developer.broadcom.com/xapis/vsphere-web-services-api/7.0u1/vim.Fault.NotAuthenticated.html: "thrown when
// an operation is denied because the session has not yet successfully logged in"). The session is the
// simulator's own: the probe carries the request's cookies through the simulator's dispatcher.
func (l *Lab) refuseWithoutSession(svc *simulator.Service, w http.ResponseWriter, r *http.Request,
	call soaphttp.Call) bool {
	if !labServedMethods[call.Method] && !(call.Method == "Destroy_Task" && call.This.Type == "ClusterComputeResource") {
		return false
	}
	if !strings.Contains(inSession(svc, r, sessionProbe), "NotAuthenticated") {
		return false
	}
	soaphttp.WriteFault(w, "", "NotAuthenticated", fmt.Sprintf(`<object type="%s">%s</object><privilegeId>System.View</privilegeId>`,
		call.This.Type, call.This.Value))
	return true
}

// inSession serves a SOAP request through the simulator's dispatcher in the session of r (its cookies) and answers
// the response's body.
func inSession(svc *simulator.Service, r *http.Request, body string) string {
	probe := httptest.NewRequest(http.MethodPost, r.URL.String(), strings.NewReader(body))
	for _, cookie := range r.Cookies() {
		probe.AddCookie(cookie)
	}
	probe.Header.Set("Content-Type", "text/xml")
	probe.Header.Set("SOAPAction", r.Header.Get("SOAPAction"))
	answer := httptest.NewRecorder()
	svc.ServeSDK(answer, probe)
	return answer.Body.String()
}
