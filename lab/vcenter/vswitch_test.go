package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// A standard switch added through the host keeps its uplinks, ports and MTU, gets the host's default policy with
// its NICs active, changes with UpdateVirtualSwitch, and shows through vCenter in the host's config.network. A NIC
// that already bridges a switch is refused with ResourceInUse.
func TestStandardSwitchThroughTheHost(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
	ctx := context.Background()
	host := hostdHost(t, c, "configManager.networkSystem", "config.network.pnic")
	if len(host.Config.Network.Pnic) < 2 {
		t.Fatalf("the test host has %d physical NICs, the test needs a free one", len(host.Config.Network.Pnic))
	}
	free := host.Config.Network.Pnic[len(host.Config.Network.Pnic)-1].Device
	ns := *host.ConfigManager.NetworkSystem
	bridge := &types.HostVirtualSwitchBondBridge{NicDevice: []string{free}}
	if _, err := methods.AddVirtualSwitch(ctx, c, &types.AddVirtualSwitch{This: ns, VswitchName: "lab-switch",
		Spec: &types.HostVirtualSwitchSpec{NumPorts: 64, Mtu: 9000, Bridge: bridge}}); err != nil {
		t.Fatal(err)
	}
	_, err := methods.AddVirtualSwitch(ctx, c, &types.AddVirtualSwitch{This: ns, VswitchName: "lab-switch-2",
		Spec: &types.HostVirtualSwitchSpec{NumPorts: 64, Bridge: bridge}})
	if !labtest.IsFault(err, "ResourceInUse") {
		t.Errorf("a NIC bridging another switch: got %v, want ResourceInUse", err)
	}
	read := func() types.HostVirtualSwitch {
		vc := tl.client(t)
		var seen mo.HostSystem
		if err := vc.RetrieveOne(ctx, tl.hosts[0].Ref, []string{"config.network.vswitch"}, &seen); err != nil {
			t.Fatal(err)
		}
		for _, vswitch := range seen.Config.Network.Vswitch {
			if vswitch.Name == "lab-switch" {
				return vswitch
			}
		}
		t.Fatal("lab-switch is not in the host's config.network through vCenter")
		return types.HostVirtualSwitch{}
	}
	vswitch := read()
	teaming := vswitch.Spec.Policy.NicTeaming
	if vswitch.Mtu != 9000 || vswitch.Spec.NumPorts != 64 || len(vswitch.Pnic) != 1 ||
		vswitch.Pnic[0] != "key-vim.host.PhysicalNic-"+free || teaming == nil || teaming.NicOrder == nil ||
		len(teaming.NicOrder.ActiveNic) != 1 || teaming.NicOrder.ActiveNic[0] != free {
		t.Fatalf("lab-switch as added: %+v", vswitch)
	}
	spec := vswitch.Spec
	spec.Bridge = nil
	spec.Policy.NicTeaming.NicOrder = &types.HostNicOrderPolicy{}
	if _, err := methods.UpdateVirtualSwitch(ctx, c, &types.UpdateVirtualSwitch{This: ns, VswitchName: "lab-switch",
		Spec: spec}); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got.Pnic) != 0 || got.Mtu != 9000 {
		t.Errorf("lab-switch after its NIC was taken off: pnic %v, mtu %d", got.Pnic, got.Mtu)
	}
	_, err = methods.UpdateVirtualSwitch(ctx, c, &types.UpdateVirtualSwitch{This: ns, VswitchName: "nowhere",
		Spec: spec})
	if !labtest.IsFault(err, "NotFound") {
		t.Errorf("updating a switch the host does not have: got %v, want NotFound", err)
	}
}

// A host of "nics": 4 has vmnic0 to vmnic3, each with an address of its own, in config.network and its network
// system.
func TestPhysicalNicsFromTheTopology(t *testing.T) {
	tl := startLabWith(t, `{"datacenters": [{"name": "dc", "hosts": [{"name": "h", "nics": 4}, {"name": "g"}]}]}`)
	c := tl.hostdSession(t, "h")
	host := hostdHost(t, c, "config.network.pnic", "configManager.networkSystem")
	var ns mo.HostNetworkSystem
	if err := property.DefaultCollector(c).RetrieveOne(context.Background(), *host.ConfigManager.NetworkSystem,
		[]string{"networkInfo.pnic"}, &ns); err != nil {
		t.Fatal(err)
	}
	macs := map[string]bool{}
	for i, nic := range host.Config.Network.Pnic {
		if nic.Device != "vmnic"+strconv.Itoa(i) || macs[nic.Mac] {
			t.Errorf("NIC %d: %s, %s", i, nic.Device, nic.Mac)
		}
		macs[nic.Mac] = true
	}
	if len(host.Config.Network.Pnic) != 4 || len(ns.NetworkInfo.Pnic) != 4 {
		t.Errorf("NICs: %d in config.network, %d in the network system, want 4", len(host.Config.Network.Pnic),
			len(ns.NetworkInfo.Pnic))
	}
	if other := hostdHost(t, tl.hostdSession(t, "g"), "config.network.pnic"); len(other.Config.Network.Pnic) != 2 {
		t.Errorf("a host without nics has %d NICs, want 2", len(other.Config.Network.Pnic))
	}
}
