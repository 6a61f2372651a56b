package hostnet

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/lists"
)

// A host's network system reports its physical NICs in networkInfo and networkConfig, as vCenter does, and follows a
// port group added through the API.
func TestHostNetworkSystemReportsNics(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.Hosts[0], []string{"configManager.networkSystem", "config.network"}, &host); err != nil {
		t.Fatal(err)
	}
	read := func() mo.HostNetworkSystem {
		var ns mo.HostNetworkSystem
		if err := c.RetrieveOne(ctx, *host.ConfigManager.NetworkSystem, []string{"networkInfo", "networkConfig"}, &ns); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	ns := read()
	if ns.NetworkConfig == nil || len(ns.NetworkConfig.Pnic) == 0 || len(ns.NetworkConfig.Pnic) != len(host.Config.Network.Pnic) {
		t.Fatalf("networkConfig.pnic does not list the host's NICs: %+v", ns.NetworkConfig)
	}
	if len(ns.NetworkInfo.Pnic) != len(host.Config.Network.Pnic) || len(ns.NetworkInfo.Vnic) == 0 {
		t.Errorf("networkInfo lacks the NICs: %d pnic, %d vnic", len(ns.NetworkInfo.Pnic), len(ns.NetworkInfo.Vnic))
	}
	if _, err := methods.AddPortGroup(ctx, c.Client, &types.AddPortGroup{This: *host.ConfigManager.NetworkSystem,
		Portgrp: types.HostPortGroupSpec{Name: "lab-test-pg", VswitchName: "vSwitch0"}}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pg := range read().NetworkConfig.Portgroup {
		found = found || pg.Spec.Name == "lab-test-pg"
	}
	if !found {
		t.Error("networkConfig does not show the port group just added")
	}
	if err := c.RetrieveOne(ctx, tl.Hosts[0], []string{"config.network"}, &host); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, pg := range host.Config.Network.Portgroup {
		found = found || (pg.Spec.Name == "lab-test-pg" && pg.Spec.VswitchName == "vSwitch0")
	}
	if !found {
		t.Error("the host's config.network does not show the port group just added")
	}
}

// QueryNetConfig answers a service's VMkernel NICs, refuses an unknown service with InvalidArgument, and follows
// SelectVnicForNicType / DeselectVnicForNicType.
func TestVirtualNicManagerServices(t *testing.T) {
	tl := startLab(t)
	c, ref := tl.Client, labtest.HostManager(t, tl.Client, tl.Hosts[0], "configManager.virtualNicManager")
	ctx := context.Background()
	query := func(nicType string) (*types.VirtualNicManagerNetConfig, error) {
		res, err := methods.QueryNetConfig(ctx, c.Client, &types.QueryNetConfig{This: ref, NicType: nicType})
		if err != nil {
			return nil, err
		}
		return res.Returnval, nil
	}
	management, err := query("management")
	if err != nil || len(management.SelectedVnic) != 1 {
		t.Fatalf("management: %+v, %v", management, err)
	}
	if _, err := query("no-such-service"); !soap.IsSoapFault(err) {
		t.Errorf("an unknown service: %v, want InvalidArgument", err)
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.InvalidArgument); !ok {
		t.Errorf("an unknown service: %#v, want InvalidArgument", soap.ToSoapFault(err).VimFault())
	}
	if _, err := methods.SelectVnicForNicType(ctx, c.Client, &types.SelectVnicForNicType{This: ref, NicType: "vmotion",
		Device: "vmk0"}); err != nil {
		t.Fatal(err)
	}
	if vmotion, _ := query("vmotion"); len(vmotion.SelectedVnic) != 1 || vmotion.SelectedVnic[0] != "vmotion.key-vim.host.VirtualNic-vmk0" {
		t.Errorf("vmotion after select: %v", vmotion.SelectedVnic)
	}
	if _, err := methods.SelectVnicForNicType(ctx, c.Client, &types.SelectVnicForNicType{This: ref, NicType: "vmotion",
		Device: "vmk9"}); err == nil {
		t.Error("an unknown VMkernel NIC was selected")
	}
	if _, err := methods.DeselectVnicForNicType(ctx, c.Client, &types.DeselectVnicForNicType{This: ref,
		NicType: "vmotion", Device: "vmk0"}); err != nil {
		t.Fatal(err)
	}
	if vmotion, _ := query("vmotion"); len(vmotion.SelectedVnic) != 0 {
		t.Errorf("vmotion after deselect: %v", vmotion.SelectedVnic)
	}
	var manager mo.HostVirtualNicManager
	if err := c.RetrieveOne(ctx, ref, []string{"info"}, &manager); err != nil || len(manager.Info.NetConfig) == 0 {
		t.Errorf("info: %+v, %v", manager.Info, err)
	}
}

// The search index walks every object, the hosts' network systems included: FindByUuid answers (here: nothing found).
func TestSearchIndexWalksHostNetworkSystems(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	res, err := methods.FindByUuid(ctx, c.Client, &types.FindByUuid{This: *c.ServiceContent.SearchIndex,
		Uuid: "00000000-0000-0000-0000-000000000000", VmSearch: true})
	if err != nil || res.Returnval != nil {
		t.Errorf("FindByUuid: %v, %v", res, err)
	}
}

// A VMkernel NIC added on a port group takes the next vmk<n>, shows in config.network.vnic and as a service candidate,
// is updated and removed; an unknown port group is NotFound.
func TestVMkernelNics(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.Hosts[0], []string{"configManager"}, &host); err != nil {
		t.Fatal(err)
	}
	ns, vnics := *host.ConfigManager.NetworkSystem, *host.ConfigManager.VirtualNicManager
	if _, err := methods.AddPortGroup(ctx, c.Client, &types.AddPortGroup{This: ns,
		Portgrp: types.HostPortGroupSpec{Name: "vmotion-pg", VswitchName: "vSwitch0"}}); err != nil {
		t.Fatal(err)
	}
	spec := types.HostVirtualNicSpec{Ip: &types.HostIpConfig{IpAddress: "100.64.1.1", SubnetMask: "255.255.255.0"},
		NetStackInstanceKey: "vmotion"}
	if _, err := methods.AddVirtualNic(ctx, c.Client, &types.AddVirtualNic{This: ns, Portgroup: "no-such-pg",
		Nic: spec}); err == nil {
		t.Error("a VMkernel NIC was added on a port group that does not exist")
	}
	added, err := methods.AddVirtualNic(ctx, c.Client, &types.AddVirtualNic{This: ns, Portgroup: "vmotion-pg", Nic: spec})
	if err != nil {
		t.Fatal(err)
	}
	device := added.Returnval
	nics := func() map[string]types.HostVirtualNic {
		if err := c.RetrieveOne(ctx, tl.Hosts[0], []string{"config.network"}, &host); err != nil {
			t.Fatal(err)
		}
		out := map[string]types.HostVirtualNic{}
		for _, nic := range host.Config.Network.Vnic {
			out[nic.Device] = nic
		}
		return out
	}
	if nic, ok := nics()[device]; !ok || nic.Spec.Ip.IpAddress != "100.64.1.1" || nic.Portgroup != "vmotion-pg" ||
		device == "vmk0" {
		t.Fatalf("%s after the add: %+v", device, nic)
	}
	vmotion, err := methods.QueryNetConfig(ctx, c.Client, &types.QueryNetConfig{This: vnics, NicType: "vmotion"})
	if err != nil || !lists.Contains(candidateDevices(vmotion.Returnval), device) {
		t.Errorf("vmotion candidates: %+v, %v", vmotion, err)
	}
	if management, _ := methods.QueryNetConfig(ctx, c.Client, &types.QueryNetConfig{This: vnics,
		NicType: "management"}); lists.Contains(candidateDevices(management.Returnval), device) {
		t.Error("a NIC on the vmotion stack is a management candidate")
	}
	if _, err := methods.UpdateVirtualNic(ctx, c.Client, &types.UpdateVirtualNic{This: ns, Device: device,
		Nic: types.HostVirtualNicSpec{Mtu: 9000}}); err != nil {
		t.Fatal(err)
	}
	if nic := nics()[device]; nic.Spec.Mtu != 9000 {
		t.Errorf("MTU after the update: %d", nic.Spec.Mtu)
	}
	if _, err := methods.RemoveVirtualNic(ctx, c.Client, &types.RemoveVirtualNic{This: ns, Device: device}); err != nil {
		t.Fatal(err)
	}
	if _, ok := nics()[device]; ok {
		t.Errorf("%s still there after its removal", device)
	}
	if _, err := methods.RemoveVirtualNic(ctx, c.Client, &types.RemoveVirtualNic{This: ns, Device: device}); err == nil {
		t.Error("a NIC that does not exist was removed")
	}
}

func candidateDevices(config *types.VirtualNicManagerNetConfig) []string {
	var out []string
	for _, nic := range config.CandidateVnic {
		out = append(out, nic.Device)
	}
	return out
}
