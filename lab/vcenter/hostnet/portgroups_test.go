package hostnet

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// UpdatePortGroup changes a standard port group's policy and VLAN in place, renames it, and refuses an unknown
// port group, an unknown switch and a taken name without changing anything.
func TestUpdatePortGroup(t *testing.T) {
	tl := startLab(t)
	c, ns := tl.Client, labtest.HostManager(t, tl.Client, tl.Hosts[0], "configManager.networkSystem")
	ctx := context.Background()
	var host mo.HostSystem
	portgroups := func() map[string]types.HostPortGroupSpec {
		if err := c.RetrieveOne(ctx, tl.Hosts[0], []string{"config.network"}, &host); err != nil {
			t.Fatal(err)
		}
		out := map[string]types.HostPortGroupSpec{}
		for _, pg := range host.Config.Network.Portgroup {
			out[pg.Spec.Name] = pg.Spec
		}
		return out
	}
	for _, name := range []string{"lab-pg-a", "lab-pg-b"} {
		if _, err := methods.AddPortGroup(ctx, c.Client, &types.AddPortGroup{This: ns,
			Portgrp: types.HostPortGroupSpec{Name: name, VswitchName: "vSwitch0"}}); err != nil {
			t.Fatal(err)
		}
	}
	off := false
	spec := types.HostPortGroupSpec{Name: "lab-pg-a", VswitchName: "vSwitch0", VlanId: 42,
		Policy: types.HostNetworkPolicy{ShapingPolicy: &types.HostNetworkTrafficShapingPolicy{Enabled: &off}}}
	if _, err := methods.UpdatePortGroup(ctx, c.Client, &types.UpdatePortGroup{This: ns, PgName: "lab-pg-a",
		Portgrp: spec}); err != nil {
		t.Fatal(err)
	}
	got := portgroups()["lab-pg-a"]
	if got.VlanId != 42 || got.Policy.ShapingPolicy == nil || got.Policy.ShapingPolicy.Enabled == nil ||
		*got.Policy.ShapingPolicy.Enabled {
		t.Errorf("config.network does not show the updated port group: %+v", got)
	}

	for _, tc := range []struct {
		pg, name, vswitch, want string
	}{
		{"no-such-pg", "no-such-pg", "vSwitch0", "NotFound"},
		{"lab-pg-a", "lab-pg-a", "vSwitch-none", "NotFound"},
		{"lab-pg-a", "lab-pg-b", "vSwitch0", "AlreadyExists"},
	} {
		_, err := methods.UpdatePortGroup(ctx, c.Client, &types.UpdatePortGroup{This: ns, PgName: tc.pg,
			Portgrp: types.HostPortGroupSpec{Name: tc.name, VswitchName: tc.vswitch}})
		if err == nil || !soap.IsSoapFault(err) ||
			!strings.HasSuffix(fmt.Sprintf("%T", soap.ToSoapFault(err).VimFault()), "."+tc.want) {
			t.Errorf("UpdatePortGroup(%s -> %s on %s): want %s, got %v", tc.pg, tc.name, tc.vswitch, tc.want, err)
		}
	}
	if got := portgroups()["lab-pg-a"]; got.VlanId != 42 {
		t.Errorf("a refused update changed the port group: %+v", got)
	}

	spec.Name = "lab-pg-renamed"
	if _, err := methods.UpdatePortGroup(ctx, c.Client, &types.UpdatePortGroup{This: ns, PgName: "lab-pg-a",
		Portgrp: spec}); err != nil {
		t.Fatal(err)
	}
	after := portgroups()
	if _, old := after["lab-pg-a"]; old || after["lab-pg-renamed"].VlanId != 42 {
		t.Errorf("rename not seen in config.network: %+v", after)
	}

	// A name with a slash: its network is stored escaped, and the port group still goes.
	if _, err := methods.AddPortGroup(ctx, c.Client, &types.AddPortGroup{This: ns,
		Portgrp: types.HostPortGroupSpec{Name: "lab/pg%", VswitchName: "vSwitch0"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := methods.RemovePortGroup(ctx, c.Client, &types.RemovePortGroup{This: ns, PgName: "lab/pg%"}); err != nil {
		t.Fatalf("removing a port group with a slash in its name: %v", err)
	}
	if _, left := portgroups()["lab/pg%"]; left {
		t.Error("the port group with a slash in its name is still there")
	}
	networks, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"Network"}, true)
	if err != nil {
		t.Fatal(err)
	}
	var listed []mo.Network
	if err := networks.Retrieve(ctx, []string{"Network"}, []string{"name"}, &listed); err != nil {
		t.Fatal(err)
	}
	for _, network := range listed {
		if network.Name == "lab%2fpg%25" {
			t.Errorf("its network is still there: %s", network.Self)
		}
	}
}

// Two hosts with a port group of the same name share one network, as vCenter keeps them; it goes with the last.
func TestPortGroupSharedAcrossHosts(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	systems := make([]types.ManagedObjectReference, 2)
	for i := range systems {
		var host mo.HostSystem
		if err := c.RetrieveOne(ctx, tl.Hosts[i], []string{"configManager.networkSystem"}, &host); err != nil {
			t.Fatal(err)
		}
		systems[i] = *host.ConfigManager.NetworkSystem
	}
	add := func(i int) error {
		_, err := methods.AddPortGroup(ctx, c.Client, &types.AddPortGroup{This: systems[i],
			Portgrp: types.HostPortGroupSpec{Name: "lab-shared", VswitchName: "vSwitch0"}})
		return err
	}
	remove := func(i int) {
		if _, err := methods.RemovePortGroup(ctx, c.Client, &types.RemovePortGroup{This: systems[i],
			PgName: "lab-shared"}); err != nil {
			t.Fatal(err)
		}
	}
	networks := func() []mo.Network {
		v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"Network"}, true)
		if err != nil {
			t.Fatal(err)
		}
		var all, named []mo.Network
		if err := v.Retrieve(ctx, []string{"Network"}, []string{"name", "host"}, &all); err != nil {
			t.Fatal(err)
		}
		for _, network := range all {
			if network.Name == "lab-shared" {
				named = append(named, network)
			}
		}
		return named
	}
	for i := range systems {
		if err := add(i); err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
	}
	if err := add(0); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("the same name twice on a host: %v", err)
	}
	if got := networks(); len(got) != 1 || len(got[0].Host) != 2 {
		t.Fatalf("want one network with both hosts, got %+v", got)
	}
	remove(0)
	if got := networks(); len(got) != 1 || len(got[0].Host) != 1 || got[0].Host[0] != tl.Hosts[1] {
		t.Fatalf("after the first host leaves: %+v", got)
	}
	remove(1)
	if got := networks(); len(got) != 0 {
		t.Errorf("the network outlives its last host: %+v", got)
	}
}
