package labtest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// HostClient is a client of a host's own endpoint (the host view): it dials the test server at sdk, with the host's
// name in the URL and so in the Host header, the way a client that resolved the host's name would.
func HostClient(t *testing.T, sdk *url.URL, hostName string) *vim25.Client {
	t.Helper()
	u := url.URL{Scheme: "https", Host: net.JoinHostPort(hostName, sdk.Port()), Path: "/sdk"}
	sc := soap.NewClient(&u, true)
	sc.DefaultTransport().DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, sdk.Host)
	}
	c, err := vim25.NewClient(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// LoginAs logs the client in.
func LoginAs(t *testing.T, c *vim25.Client, user, password string) error {
	t.Helper()
	_, err := methods.Login(context.Background(), c, &types.Login{This: *c.ServiceContent.SessionManager,
		UserName: user, Password: password})
	return err
}

// IsFault tells whether err is a SOAP fault of the given vim25 type (ManagedObjectNotFound, InvalidLogin, ...).
func IsFault(err error, kind string) bool {
	if err == nil || !soap.IsSoapFault(err) {
		return false
	}
	fault := soap.ToSoapFault(err).VimFault()
	return fault != nil && reflect.TypeOf(fault).Name() == kind
}

// Simulator creates govmomi's VPX model in the simulator's registry for one test: datacenter DC0 with a cluster
// DC0_C0 of two hosts and a standalone host DC0_H0, one powered-on VM in the cluster (on a host the simulator picks)
// and one on DC0_H0.
func Simulator(t *testing.T) *simulator.Model {
	t.Helper()
	model := simulator.VPX()
	model.ClusterHost, model.Machine = 2, 1
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	return model
}

// Serve serves a simulator model for one test over TLS through handle, which answers a SOAP request itself or
// passes it on to the simulator (sim); a nil handle passes every request on. It answers a client logged in as the
// model's user.
func Serve(t *testing.T, model *simulator.Model,
	handle func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func())) *govmomi.Client {
	t.Helper()
	model.Service.RegisterSDK(simulator.Map)
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sim := func() { model.Service.ServeSDK(w, r) }
		if handle == nil {
			sim()
			return
		}
		handle(w, soaphttp.ScanCall(body), body, sim)
	}))
	t.Cleanup(server.Close)
	sdk, _ := url.Parse(server.URL + "/sdk")
	sdk.User = url.UserPassword("lab", "s3cret")
	model.Service.Listen = &url.URL{User: sdk.User}
	c, err := govmomi.NewClient(context.Background(), sdk, true)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
