package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// The methods the lab answers itself refuse a caller without a session, like every other vCenter method.
func TestLabServedMethodsNeedASession(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	anonymous, err := vim25.NewClient(ctx, soap.NewClient(tl.sdk, true))
	if err != nil {
		t.Fatal(err)
	}
	host, cluster := tl.hosts[0].Ref, tl.clusters[0]
	want := map[string]types.ManagedObjectReference{"GetResourceUsage": cluster, "DisconnectHost_Task": host,
		"ReconnectHost_Task": host, "RefreshDatastore": tl.Lab.datacenterDatastore()}
	calls := map[string]func() error{
		"GetResourceUsage": func() error {
			_, err := methods.GetResourceUsage(ctx, anonymous, &types.GetResourceUsage{This: cluster})
			return err
		},
		"DisconnectHost_Task": func() error {
			_, err := methods.DisconnectHost_Task(ctx, anonymous, &types.DisconnectHost_Task{This: host})
			return err
		},
		"RefreshDatastore": func() error {
			_, err := methods.RefreshDatastore(ctx, anonymous, &types.RefreshDatastore{This: want["RefreshDatastore"]})
			return err
		},
		"ReconnectHost_Task": func() error {
			_, err := methods.ReconnectHost_Task(ctx, anonymous, &types.ReconnectHost_Task{This: host})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if !soap.IsSoapFault(err) {
			t.Fatalf("%s without a session: got %v, want a NotAuthenticated fault", name, err)
		}
		fault, ok := soap.ToSoapFault(err).VimFault().(types.NotAuthenticated)
		if !ok || fault.Object != want[name] || fault.PrivilegeId != "System.View" {
			t.Errorf("%s without a session: got %#v, want NotAuthenticated", name, soap.ToSoapFault(err).VimFault())
		}
	}
	if got := tl.state(t).Hosts[0].ConnectionState; got != "connected" {
		t.Errorf("an anonymous DisconnectHost_Task changed the host: connection state %q", got)
	}

	c := tl.client(t)
	if _, err := methods.GetResourceUsage(ctx, c.Client, &types.GetResourceUsage{This: cluster}); err != nil {
		t.Errorf("GetResourceUsage with a session: %v", err)
	}
}

func (l *Lab) datacenterDatastore() types.ManagedObjectReference {
	return simulator.Map.Get(l.datacenters[0]).(*simulator.Datacenter).Datastore[0]
}
