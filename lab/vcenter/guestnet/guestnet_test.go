package guestnet

import (
	"context"
	"reflect"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// New keeps the guest_ip of every datacenter's VMs that have one, and nothing of the others.
func TestNewFromTopology(t *testing.T) {
	topo, err := labtest.Topology(t, `{"datacenters": [
		{"name": "dc1", "hosts": [{"name": "esx-1"}], "vms": [
			{"name": "vm-a", "host": "esx-1", "guest_ip": "127.0.0.1"}, {"name": "vm-b", "host": "esx-1"}]},
		{"name": "dc2", "hosts": [{"name": "esx-2"}], "vms": [{"name": "vm-c", "host": "esx-2", "guest_ip": "10.0.0.7"}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := New(topo), (Addresses{"vm-a": "127.0.0.1", "vm-c": "10.0.0.7"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("addresses: %v, want %v", got, want)
	}
}

// vmWith is a VM object as the simulator keeps it, with the given devices.
func vmWith(name string, devices ...types.BaseVirtualDevice) *simulator.VirtualMachine {
	vm := &simulator.VirtualMachine{}
	vm.Name = name
	vm.Config = &types.VirtualMachineConfigInfo{Hardware: types.VirtualHardware{Device: devices}}
	vm.Guest = &types.GuestInfo{}
	vm.Summary.Guest = &types.VirtualMachineGuestSummary{}
	return vm
}

func ethernetCard(key int32, mac string, backing types.BaseVirtualDeviceBackingInfo) *types.VirtualVmxnet3 {
	return &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
		VirtualDevice: types.VirtualDevice{Key: key, Backing: backing}, MacAddress: mac}}}
}

func networkBacking(name string) *types.VirtualEthernetCardNetworkBackingInfo {
	return &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: name}}
}

// A running VM with a guest address reports it, and its first NIC (network, MAC, key, connected) in guest.net;
// devices before it that are no NICs, and NICs after it, are not reported.
func TestSetRunning(t *testing.T) {
	a := Addresses{"vm-a": "127.0.0.1"}
	vm := vmWith("vm-a", &types.VirtualDisk{VirtualDevice: types.VirtualDevice{Key: 2000}},
		ethernetCard(4000, "00:50:56:aa:bb:01", networkBacking("VM Network")),
		ethernetCard(4001, "00:50:56:aa:bb:02", networkBacking("Other Network")))
	a.Set(vm, true)
	want := []types.GuestNicInfo{{Network: "VM Network", IpAddress: []string{"127.0.0.1"},
		MacAddress: "00:50:56:aa:bb:01", Connected: true, DeviceConfigId: 4000}}
	if vm.Guest.IpAddress != "127.0.0.1" || vm.Summary.Guest.IpAddress != "127.0.0.1" || !reflect.DeepEqual(vm.Guest.Net, want) {
		t.Fatalf("guest: %+v, summary %+v", vm.Guest, vm.Summary.Guest)
	}
}

// A NIC on a distributed port group reports no network name (the lab names only a standard network's); a VM
// without a NIC reports its address but no guest.net.
func TestSetNICs(t *testing.T) {
	a := Addresses{"vm-a": "127.0.0.1"}
	vm := vmWith("vm-a", ethernetCard(4000, "00:50:56:aa:bb:01",
		&types.VirtualEthernetCardDistributedVirtualPortBackingInfo{}))
	a.Set(vm, true)
	if len(vm.Guest.Net) != 1 || vm.Guest.Net[0].Network != "" || vm.Guest.Net[0].DeviceConfigId != 4000 {
		t.Fatalf("distributed port: %+v", vm.Guest.Net)
	}
	vm = vmWith("vm-a")
	a.Set(vm, true)
	if vm.Guest.IpAddress != "127.0.0.1" || vm.Guest.Net != nil {
		t.Fatalf("no NIC: %+v", vm.Guest)
	}
}

// A VM reports no address while it does not run, without a guest address, or without a configuration; Set clears
// what it reported before.
func TestSetNone(t *testing.T) {
	a := Addresses{"vm-a": "127.0.0.1"}
	nic := ethernetCard(4000, "00:50:56:aa:bb:01", networkBacking("VM Network"))
	cases := map[string]struct {
		vm      *simulator.VirtualMachine
		running bool
	}{
		"not running":      {vmWith("vm-a", nic), false},
		"no guest address": {vmWith("vm-b", nic), true},
		"no configuration": {func() *simulator.VirtualMachine { vm := vmWith("vm-a", nic); vm.Config = nil; return vm }(), true},
	}
	for name, c := range cases {
		c.vm.Guest.IpAddress, c.vm.Summary.Guest.IpAddress = "192.0.2.1", "192.0.2.1"
		c.vm.Guest.Net = []types.GuestNicInfo{{Network: "VM Network"}}
		a.Set(c.vm, c.running)
		if c.vm.Guest.IpAddress != "" || c.vm.Summary.Guest.IpAddress != "" || c.vm.Guest.Net != nil {
			t.Errorf("%s: %+v, summary %+v", name, c.vm.Guest, c.vm.Summary.Guest)
		}
	}
}

// Changes name the three properties a power change updates, with what Set writes: the address and NIC while the VM
// runs, empty once it stops.
func TestChanges(t *testing.T) {
	a := Addresses{"vm-a": "127.0.0.1"}
	vm := vmWith("vm-a", ethernetCard(4000, "00:50:56:aa:bb:01", networkBacking("VM Network")))
	nics := []types.GuestNicInfo{{Network: "VM Network", IpAddress: []string{"127.0.0.1"},
		MacAddress: "00:50:56:aa:bb:01", Connected: true, DeviceConfigId: 4000}}
	want := []types.PropertyChange{{Name: "guest.ipAddress", Val: "127.0.0.1"}, {Name: "guest.net", Val: nics},
		{Name: "summary.guest.ipAddress", Val: "127.0.0.1"}}
	if got := a.Changes(vm, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("running: %+v, want %+v", got, want)
	}
	want = []types.PropertyChange{{Name: "guest.ipAddress", Val: ""}, {Name: "guest.net", Val: []types.GuestNicInfo(nil)},
		{Name: "summary.guest.ipAddress", Val: ""}}
	if got := a.Changes(vm, false); !reflect.DeepEqual(got, want) {
		t.Fatalf("stopped: %+v, want %+v", got, want)
	}
}

// On govmomi's simulator, what Set writes and what Changes change reach a client's property collector: the VM's
// address and its NIC (the VPX model's, on a distributed port group) while it runs, none after it stops.
func TestOnSimulator(t *testing.T) {
	model := labtest.Simulator(t)
	c := labtest.Serve(t, model, nil)
	ctx := context.Background()
	ref := simulator.Map.Any("VirtualMachine").Reference()
	sim := simulator.Map.Get(ref).(*simulator.VirtualMachine)
	a := Addresses{sim.Name: "127.0.0.1"}
	read := func() mo.VirtualMachine {
		var vm mo.VirtualMachine
		if err := property.DefaultCollector(c.Client).RetrieveOne(ctx, ref,
			[]string{"guest.ipAddress", "guest.net", "summary.guest.ipAddress", "config.hardware.device"}, &vm); err != nil {
			t.Fatal(err)
		}
		return vm
	}
	card := func(vm mo.VirtualMachine) *types.VirtualEthernetCard {
		nics := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualEthernetCard)(nil))
		if len(nics) == 0 {
			t.Fatal("the model's VM has no NIC")
		}
		return nics[0].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	}
	reports := func(vm mo.VirtualMachine) bool {
		nic := card(vm)
		return vm.Guest != nil && vm.Summary.Guest != nil && vm.Guest.IpAddress == "127.0.0.1" &&
			vm.Summary.Guest.IpAddress == "127.0.0.1" && len(vm.Guest.Net) == 1 &&
			vm.Guest.Net[0].MacAddress == nic.MacAddress && vm.Guest.Net[0].DeviceConfigId == nic.Key &&
			vm.Guest.Net[0].Connected && reflect.DeepEqual(vm.Guest.Net[0].IpAddress, []string{"127.0.0.1"})
	}

	a.Set(sim, true)
	if vm := read(); !reports(vm) {
		t.Fatalf("set: %+v", vm.Guest)
	}
	simulator.Map.Update(sim, a.Changes(sim, false))
	// The simulator leaves an empty property out of its answer.
	if vm := read(); vm.Guest != nil && (vm.Guest.IpAddress != "" || len(vm.Guest.Net) != 0) ||
		vm.Summary.Guest != nil && vm.Summary.Guest.IpAddress != "" {
		t.Fatalf("stopped: %+v, summary %+v", vm.Guest, vm.Summary.Guest)
	}
	simulator.Map.Update(sim, a.Changes(sim, true))
	if vm := read(); !reports(vm) {
		t.Fatalf("started: %+v", vm.Guest)
	}
}
