package hostnet

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A host's TCP/IP stacks: UpdateNetworkConfig edits them (the default stack's DNS is the host's), a bad value or an
// unknown stack is refused with nothing changed, and a stack runs while a VMkernel NIC uses it.
func TestNetStackInstances(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	read := func(ref types.ManagedObjectReference) (stacks map[string]types.HostNetStackInstance,
		running map[string][]string, host mo.HostSystem) {
		if err := c.RetrieveOne(ctx, ref, []string{"configManager", "config.network", "runtime"}, &host); err != nil {
			t.Fatal(err)
		}
		stacks, running = map[string]types.HostNetStackInstance{}, map[string][]string{}
		for _, stack := range host.Config.Network.NetStackInstance {
			stacks[stack.Key] = stack
		}
		for _, stack := range host.Runtime.NetworkRuntimeInfo.NetStackInstanceRuntimeInfo {
			running[stack.NetStackInstanceKey] = stack.VmknicKeys
		}
		return stacks, running, host
	}
	stacks, running, host := read(tl.Hosts[0])
	for _, key := range []string{"defaultTcpipStack", "vmotion", "vSphereProvisioning"} {
		if _, ok := stacks[key]; !ok {
			t.Errorf("stack %s missing from config.network.netStackInstance", key)
		}
	}
	if len(running) != 1 || strings.Join(running["defaultTcpipStack"], ",") != "vmk0" {
		t.Fatalf("running stacks at start: %v, want only the default one with vmk0", running)
	}
	ns := *host.ConfigManager.NetworkSystem
	update := func(specs ...types.HostNetStackInstance) error {
		config := types.HostNetworkConfig{}
		for _, spec := range specs {
			config.NetStackSpec = append(config.NetStackSpec, types.HostNetworkConfigNetStackSpec{
				NetStackInstance: spec, Operation: "edit"})
		}
		_, err := methods.UpdateNetworkConfig(ctx, c.Client, &types.UpdateNetworkConfig{This: ns, Config: config,
			ChangeMode: "modify"})
		return err
	}

	dns := &types.HostDnsConfig{HostName: "gpu01", DomainName: "example.com", Address: []string{"192.0.2.53"},
		SearchDomain: []string{"example.com"}}
	if err := update(types.HostNetStackInstance{Key: "defaultTcpipStack", DnsConfig: dns,
		CongestionControlAlgorithm: "cubic", RequestedMaxNumberOfConnections: 12000},
		types.HostNetStackInstance{Key: "vmotion", IpRouteConfig: &types.HostIpRouteConfig{
			DefaultGateway: "100.64.1.254"}}); err != nil {
		t.Fatal(err)
	}
	stacks, running, host = read(tl.Hosts[0])
	def := stacks["defaultTcpipStack"]
	if def.DnsConfig.GetHostDnsConfig().HostName != "gpu01" || def.CongestionControlAlgorithm != "cubic" ||
		def.RequestedMaxNumberOfConnections != 12000 {
		t.Errorf("default stack after the edit: %+v", def)
	}
	if host.Config.Network.DnsConfig.GetHostDnsConfig().DomainName != "example.com" {
		t.Errorf("the host's DNS does not follow its default stack: %+v", host.Config.Network.DnsConfig)
	}
	if gw := stacks["vmotion"].IpRouteConfig.GetHostIpRouteConfig().DefaultGateway; gw != "100.64.1.254" {
		t.Errorf("vmotion stack gateway %q, want 100.64.1.254", gw)
	}
	if other, _, _ := read(tl.Hosts[1]); other["defaultTcpipStack"].CongestionControlAlgorithm != "newreno" {
		t.Errorf("editing one host's stack changed another host's")
	}

	for _, bad := range []types.HostNetStackInstance{
		{Key: "defaultTcpipStack", CongestionControlAlgorithm: "bbr", DnsConfig: &types.HostDnsConfig{HostName: "x"}},
		{Key: "no-such-stack", CongestionControlAlgorithm: "newreno"},
	} {
		if err := update(types.HostNetStackInstance{Key: "vmotion", CongestionControlAlgorithm: "cubic"},
			bad); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
	stacks, _, _ = read(tl.Hosts[0])
	if stacks["defaultTcpipStack"].DnsConfig.GetHostDnsConfig().HostName != "gpu01" ||
		stacks["vmotion"].CongestionControlAlgorithm != "newreno" {
		t.Errorf("a refused request changed the stacks: %+v", stacks)
	}

	if _, err := methods.AddPortGroup(ctx, c.Client, &types.AddPortGroup{This: ns,
		Portgrp: types.HostPortGroupSpec{Name: "vmotion-pg", VswitchName: "vSwitch0"}}); err != nil {
		t.Fatal(err)
	}
	added, err := methods.AddVirtualNic(ctx, c.Client, &types.AddVirtualNic{This: ns, Portgroup: "vmotion-pg",
		Nic: types.HostVirtualNicSpec{NetStackInstanceKey: "vmotion",
			Ip: &types.HostIpConfig{IpAddress: "100.64.1.1", SubnetMask: "255.255.255.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, running, _ = read(tl.Hosts[0]); strings.Join(running["vmotion"], ",") != added.Returnval {
		t.Errorf("running stacks with a vmotion NIC: %v, want vmotion with %s", running, added.Returnval)
	}
	if _, err := methods.RemoveVirtualNic(ctx, c.Client, &types.RemoveVirtualNic{This: ns,
		Device: added.Returnval}); err != nil {
		t.Fatal(err)
	}
	if _, running, _ = read(tl.Hosts[0]); len(running) != 1 {
		t.Errorf("running stacks after the vmotion NIC went: %v, want only the default one", running)
	}
}
