package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/vlcm"
)

// A host's network system reports its physical NICs in networkInfo and networkConfig, as vCenter does, and follows a
// port group added through the API.
func TestHostNetworkSystemReportsNics(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.hosts[0].ref, []string{"configManager.networkSystem", "config.network"}, &host); err != nil {
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
	if err := c.RetrieveOne(ctx, tl.hosts[0].ref, []string{"config.network"}, &host); err != nil {
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
	_, c, ref := startLabHostManager(t, "configManager.virtualNicManager")
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

// fetchSoftwarePackages lists the base image's VIBs at the installed base image version; a VIB id reads as vendor,
// type, name and version.
func TestFetchSoftwarePackages(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.hosts[0].ref, []string{"configManager.imageConfigManager"}, &host); err != nil {
		t.Fatal(err)
	}
	res, err := methods.FetchSoftwarePackages(ctx, c.Client, &types.FetchSoftwarePackages{
		This: *host.ConfigManager.ImageConfigManager})
	if err != nil {
		t.Fatal(err)
	}
	base := tl.vlcm.Installed(tl.hosts[0].ref)[vlcm.BaseImageComponent]
	found := false
	for _, p := range res.Returnval {
		if p.Name == "esx-base" {
			found = p.Version == base && p.Vendor == "VMware" && p.AcceptanceLevel == "vmware_certified"
		}
	}
	if !found {
		t.Errorf("esx-base at %s not listed: %+v", base, res.Returnval)
	}
	vib, ok := vibPackage("NVIDIA_bootbank_NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240", "host driver", nil)
	if !ok || vib.Vendor != "NVIDIA" || vib.Type != "bootbank" || vib.Name != "NVD-VGPU-800" ||
		vib.Version != "525.105.14-1OEM.800.1.0.20613240" || vib.AcceptanceLevel != "partner" {
		t.Errorf("VIB id read as %+v, %v", vib, ok)
	}
	if _, ok := vibPackage("no-underscores", "", nil); ok {
		t.Error("a malformed VIB id was read")
	}
}

// The search index walks every object, the hosts' network systems included: FindByUuid answers (here: nothing found).
func TestSearchIndexWalksHostNetworkSystems(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	res, err := methods.FindByUuid(ctx, c.Client, &types.FindByUuid{This: *c.ServiceContent.SearchIndex,
		Uuid: "00000000-0000-0000-0000-000000000000", VmSearch: true})
	if err != nil || res.Returnval != nil {
		t.Errorf("FindByUuid: %v, %v", res, err)
	}
}

// A host's lockdown mode starts disabled, follows ChangeLockdownMode in both places a client reads it, and an
// unknown mode is refused.
func TestHostLockdownMode(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	read := func() (mo.HostSystem, mo.HostAccessManager) {
		var host mo.HostSystem
		if err := c.RetrieveOne(ctx, tl.hosts[0].ref, []string{"configManager.hostAccessManager", "config.lockdownMode"},
			&host); err != nil {
			t.Fatal(err)
		}
		var access mo.HostAccessManager
		if err := c.RetrieveOne(ctx, *host.ConfigManager.HostAccessManager, []string{"lockdownMode"}, &access); err != nil {
			t.Fatal(err)
		}
		return host, access
	}
	host, access := read()
	if access.LockdownMode != "lockdownDisabled" || host.Config.LockdownMode != "lockdownDisabled" {
		t.Fatalf("at start: %s / %s", access.LockdownMode, host.Config.LockdownMode)
	}
	ref := *host.ConfigManager.HostAccessManager
	if _, err := methods.ChangeLockdownMode(ctx, c.Client, &types.ChangeLockdownMode{This: ref, Mode: "lockdownSome"}); err == nil {
		t.Error("an unknown lockdown mode was taken")
	}
	if _, err := methods.ChangeLockdownMode(ctx, c.Client, &types.ChangeLockdownMode{This: ref,
		Mode: types.HostLockdownModeLockdownNormal}); err != nil {
		t.Fatal(err)
	}
	if host, access = read(); access.LockdownMode != "lockdownNormal" || host.Config.LockdownMode != "lockdownNormal" {
		t.Errorf("after the change: %s / %s", access.LockdownMode, host.Config.LockdownMode)
	}
	if _, err := methods.UpdateLockdownExceptions(ctx, c.Client, &types.UpdateLockdownExceptions{This: ref,
		Users: []string{"svc-backup"}}); err != nil {
		t.Fatal(err)
	}
	res, err := methods.QueryLockdownExceptions(ctx, c.Client, &types.QueryLockdownExceptions{This: ref})
	if err != nil || len(res.Returnval) != 1 || res.Returnval[0] != "svc-backup" {
		t.Errorf("lockdown exceptions: %+v, %v", res, err)
	}
}

// A VMkernel NIC added on a port group takes the next vmk<n>, shows in config.network.vnic and as a service candidate,
// is updated and removed; an unknown port group is NotFound.
func TestVMkernelNics(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.hosts[0].ref, []string{"configManager"}, &host); err != nil {
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
		if err := c.RetrieveOne(ctx, tl.hosts[0].ref, []string{"config.network"}, &host); err != nil {
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
