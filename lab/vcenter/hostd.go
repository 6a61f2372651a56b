package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25/types"
	vimxml "github.com/vmware/govmomi/vim25/xml"

	"vcsim/soaphttp"
	"vcsim/xmltree"
)

// The host view: the lab's vCenter process also answers as each host's own endpoint (hostd), the vim25 SOAP API an
// ESXi host serves at https://<host>/sdk. A request reaches the host view when its HTTP Host header names a host of
// the lab (pyVmomi sends the name it dialled, "esxi-21.lab.local:8989"); any other Host header gets vCenter.
//
// There is one inventory: the host view is a translation layer over the simulator's objects. A request's
// references in hostd's forms are turned into vCenter's before the simulator serves it, and the answer's references
// back into hostd's; objects of other hosts (their VMs, the cluster's other members, other datacenters) are left
// out of answers, and a call on one of them fails with ManagedObjectNotFound, as it does on a host that does not
// have the object. A change made through the host view is therefore seen through vCenter and the reverse.

// hostdLogin holds the host's root account and the vCenter account the host view's sessions run under.
type hostdLogin struct {
	esxiUsername, esxiPassword       string
	vcenterUsername, vcenterPassword string
}

// hostdTarget is the lab host an SDK request's Host header names, or nil for vCenter.
func (l *Lab) hostdTarget(r *http.Request) *hostState {
	name := r.Host
	if host, _, err := net.SplitHostPort(name); err == nil {
		name = host
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	for _, h := range l.hosts {
		if strings.ToLower(h.name) == name {
			return h
		}
	}
	return nil
}

func byAddress(hostHeader string) bool {
	if name, _, err := net.SplitHostPort(hostHeader); err == nil {
		hostHeader = name
	}
	return net.ParseIP(strings.Trim(hostHeader, "[]")) != nil
}

// hostdRouter sends SOAP requests whose Host header names a lab host through the host view, others to vCenter.
func (l *Lab) hostdRouter(vcenter http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var host *hostState
		// A request by address is vCenter's without taking the lab's lock, which property collector waits skip.
		if r.Method == http.MethodPost && !byAddress(r.Host) {
			l.mu.Lock()
			host = l.hostdTarget(r)
			l.mu.Unlock()
		}
		if host == nil {
			vcenter.ServeHTTP(w, r)
			return
		}
		body, ok := soaphttp.ReadBody(w, r)
		if !ok {
			return
		}
		l.serveHostd(vcenter, host, w, r, body)
	})
}

func (l *Lab) serveHostd(vcenter http.Handler, host *hostState, w http.ResponseWriter, r *http.Request, body []byte) {
	request, err := xmltree.Parse(body)
	call := soaphttp.ScanCall(body)
	if err != nil || call.Method == "" {
		soaphttp.WriteFault(w, "Unable to parse the request", "InvalidRequest", "")
		return
	}
	l.mu.Lock()
	view := l.newHostView(host)
	l.mu.Unlock()
	if call.Method == "RetrieveServiceContent" {
		writeHostdServiceContent(w)
		return
	}
	if vcenterOnlyMethods[call.Method] {
		soaphttp.WriteFault(w, "The operation is not supported on the object.", "NotSupported", "")
		return
	}
	if fault := view.toVCenter(request, call); fault != nil {
		fault(w)
		return
	}
	translated := hostdCall{method: call.Method, this: soaphttp.ScanCall(request.Bytes()).This}
	if prop := request.Find("prop"); prop != nil {
		translated.prop, _ = prop.Text()
	}
	if call.Method == "Login" && !l.hostdCredentials(request) {
		soaphttp.WriteFault(w, "Cannot complete login due to an incorrect user name or password.", "InvalidLogin", "")
		return
	}
	forwarded := r.Clone(r.Context())
	forwarded.Body = io.NopCloser(bytes.NewReader(request.Bytes()))
	forwarded.ContentLength = -1
	rec := soaphttp.NewRecorder()
	vcenter.ServeHTTP(rec, forwarded)

	l.mu.Lock()
	view = l.newHostView(host) // the call may have changed what the host has (a VM created, a datastore mounted)
	answer := view.fromVCenter(rec.Body.Bytes(), translated, rec.Status == http.StatusOK)
	l.mu.Unlock()
	rec.Body.Reset()
	rec.Body.Write(answer)
	rec.Header().Del("Content-Length")
	rec.Flush(w)
}

// vcenterOnlyMethods are inventory and provisioning methods a host refuses with NotSupported ("the operation is not
// supported by the current agent", the vSphere Web Services API's wording for CloneVM_Task and the folder and
// cluster methods on a host that is not managed through vCenter): a host has one datacenter and no clusters,
// folders of its own or other hosts.
var vcenterOnlyMethods = map[string]bool{
	"CreateDatacenter": true, "CreateClusterEx": true, "CreateCluster": true, "CreateFolder": true,
	"AddStandaloneHost_Task": true, "AddHost_Task": true, "MoveIntoFolder_Task": true, "CreateDVS_Task": true,
	"CloneVM_Task": true, "MigrateVM_Task": true, "MoveHostInto_Task": true, "MoveInto_Task": true,
}

// hostdCall is what the host view needs to know of a request, in vCenter's references: Fetch's property as well.
type hostdCall struct {
	method string
	this   types.ManagedObjectReference
	prop   string
}

// hostdCredentials lets the host's root account log in: Login runs under the lab's vCenter account when the
// request names the host's credentials, and is refused (false) otherwise, vCenter's account included.
func (l *Lab) hostdCredentials(request *xmltree.Node) bool {
	user, password := request.Find("userName"), request.Find("password")
	if user == nil || password == nil {
		return false
	}
	userText, _ := user.Text()
	passwordText, _ := password.Text()
	login := l.hostdLogin
	if login.esxiUsername == "" || userText != login.esxiUsername || passwordText != login.esxiPassword {
		return false
	}
	user.SetText(login.vcenterUsername)
	password.SetText(login.vcenterPassword)
	return true
}

// hostdAnswerUser shows the session's user as the host's root account in Login's and the session manager's answers.
func (v *hostView) hostdAnswerUser(answer *xmltree.Node) {
	answer.Walk(func(n *xmltree.Node) {
		if n.Name() == "userName" || n.Name() == "fullName" {
			if text, ok := n.Text(); ok && text == v.login.vcenterUsername {
				n.SetText(v.login.esxiUsername)
			}
		}
	})
}

func writeManagedObjectNotFound(ref types.ManagedObjectReference) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { soaphttp.WriteObjectNotFound(w, ref) }
}

// writeHostdServiceContent answers RetrieveServiceContent as an ESXi host: the managers a host has, under hostd's
// ids (govmomi's esx.ServiceContent, recorded from ESXi), and about as ESXi reports itself (apiType HostAgent,
// productLineId embeddedEsx), with the version of the lab's hosts.
func writeHostdServiceContent(w http.ResponseWriter) {
	content := esx.ServiceContent
	content.About = esxiAbout(content.About)
	content.About.Name = "VMware ESXi"
	body, err := vimxml.Marshal(struct {
		XMLName   vimxml.Name          `xml:"urn:vim25 RetrieveServiceContentResponse"`
		Returnval types.ServiceContent `xml:"returnval"`
	}{Returnval: content})
	if err != nil {
		soaphttp.WriteSystemError(w, err.Error())
		return
	}
	soaphttp.WriteResponse(w, string(body))
}
