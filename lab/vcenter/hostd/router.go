// Package hostd is the host view: the lab's vCenter process also answers as each host's own endpoint (hostd), the
// vim25 SOAP API an ESXi host serves at https://<host>/sdk. A request reaches the host view when its HTTP Host
// header names a host of the lab (pyVmomi sends the name it dialled, "esxi-21.lab.local:8989"); any other Host
// header gets vCenter.
//
// There is one inventory: the host view is a translation layer over the simulator's objects. A request's
// references in hostd's forms are turned into vCenter's before the simulator serves it, and the answer's references
// back into hostd's; objects of other hosts (their VMs, the cluster's other members, other datacenters) are left
// out of answers, and a call on one of them fails with ManagedObjectNotFound, as it does on a host that does not
// have the object. A change made through the host view is therefore seen through vCenter and the reverse.
package hostd

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25/types"
	vimxml "github.com/vmware/govmomi/vim25/xml"

	"vcsim/soaphttp"
	"vcsim/xmltree"
)

// Login holds the hosts' root account and the vCenter account the host view's sessions run under.
type Login struct {
	ESXiUsername, ESXiPassword       string
	VCenterUsername, VCenterPassword string
}

// Lab is what the host view needs of the lab. It calls HostNamed holding the lock, and maps a host's inventory
// from the simulator's objects holding it too.
type Lab interface {
	sync.Locker
	// HostNamed is the lab host of that name, compared in lower case, or false.
	HostNamed(name string) (types.ManagedObjectReference, bool)
	// Login is the hosts' root account and the vCenter account behind it, as they are at the time of a request.
	Login() Login
	// About sets in a the product, version and build the lab's hosts report.
	About(a types.AboutInfo) types.AboutInfo
}

type router struct {
	lab     Lab
	vcenter http.Handler
}

// target is the lab host an SDK request's Host header names, or false for vCenter.
func (rt router) target(r *http.Request) (types.ManagedObjectReference, bool) {
	name := r.Host
	if host, _, err := net.SplitHostPort(name); err == nil {
		name = host
	}
	return rt.lab.HostNamed(strings.TrimSuffix(strings.ToLower(name), "."))
}

func byAddress(hostHeader string) bool {
	if name, _, err := net.SplitHostPort(hostHeader); err == nil {
		hostHeader = name
	}
	return net.ParseIP(strings.Trim(hostHeader, "[]")) != nil
}

// Router sends SOAP requests whose Host header names a lab host through the host view, others to vCenter.
func Router(lab Lab, vcenter http.Handler) http.Handler {
	rt := router{lab: lab, vcenter: vcenter}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var host types.ManagedObjectReference
		found := false
		// A request by address is vCenter's without taking the lab's lock, which property collector waits skip.
		if r.Method == http.MethodPost && !byAddress(r.Host) {
			lab.Lock()
			host, found = rt.target(r)
			lab.Unlock()
		}
		if !found {
			vcenter.ServeHTTP(w, r)
			return
		}
		body, ok := soaphttp.ReadBody(w, r)
		if !ok {
			return
		}
		rt.serve(host, w, r, body)
	})
}

func (rt router) serve(host types.ManagedObjectReference, w http.ResponseWriter, r *http.Request, body []byte) {
	request, err := xmltree.Parse(body)
	call := soaphttp.ScanCall(body)
	if err != nil || call.Method == "" {
		soaphttp.WriteFault(w, "Unable to parse the request", "InvalidRequest", "")
		return
	}
	rt.lab.Lock()
	view := newHostView(host, rt.lab.Login())
	rt.lab.Unlock()
	if call.Method == "RetrieveServiceContent" {
		writeServiceContent(w, rt.lab.About)
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
	if call.Method == "Login" && !credentials(request, view.login) {
		soaphttp.WriteFault(w, "Cannot complete login due to an incorrect user name or password.", "InvalidLogin", "")
		return
	}
	forwarded := r.Clone(r.Context())
	forwarded.Body = io.NopCloser(bytes.NewReader(request.Bytes()))
	forwarded.ContentLength = -1
	rec := soaphttp.NewRecorder()
	rt.vcenter.ServeHTTP(rec, forwarded)

	rt.lab.Lock()
	view = newHostView(host, view.login) // the call may have changed what the host has (a VM created, a datastore mounted)
	answer := view.fromVCenter(rec.Body.Bytes(), translated, rec.Status == http.StatusOK)
	rt.lab.Unlock()
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

// credentials lets the host's root account log in: Login runs under the lab's vCenter account when the request
// names the host's credentials, and is refused (false) otherwise, vCenter's account included.
func credentials(request *xmltree.Node, login Login) bool {
	user, password := request.Find("userName"), request.Find("password")
	if user == nil || password == nil {
		return false
	}
	userText, _ := user.Text()
	passwordText, _ := password.Text()
	if login.ESXiUsername == "" || userText != login.ESXiUsername || passwordText != login.ESXiPassword {
		return false
	}
	user.SetText(login.VCenterUsername)
	password.SetText(login.VCenterPassword)
	return true
}

// hostdAnswerUser shows the session's user as the host's root account in Login's and the session manager's answers.
func (v *hostView) hostdAnswerUser(answer *xmltree.Node) {
	answer.Walk(func(n *xmltree.Node) {
		if n.Name() == "userName" || n.Name() == "fullName" {
			if text, ok := n.Text(); ok && text == v.login.VCenterUsername {
				n.SetText(v.login.ESXiUsername)
			}
		}
	})
}

func writeManagedObjectNotFound(ref types.ManagedObjectReference) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { soaphttp.WriteObjectNotFound(w, ref) }
}

// writeServiceContent answers RetrieveServiceContent as an ESXi host: the managers a host has, under hostd's ids
// (govmomi's esx.ServiceContent, recorded from ESXi), and about as ESXi reports itself (apiType HostAgent,
// productLineId embeddedEsx), with the version of the lab's hosts.
func writeServiceContent(w http.ResponseWriter, about func(types.AboutInfo) types.AboutInfo) {
	content := esx.ServiceContent
	content.About = about(content.About)
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
