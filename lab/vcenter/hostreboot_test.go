package main

import (
	"context"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

const rebootTopology = `{"datacenters": [{"name": "dc",
	"clusters": [{"name": "hpc", "hosts": [
		{"name": "esxi-31", "gpus": [{"model": "A100-40", "count": 2}], "passthrough_needs_reboot": true,
		 "reboot_seconds": 0.3},
		{"name": "esxi-32", "gpus": [{"model": "A100-40", "count": 1}]}]}],
	"vms": [{"name": "vm-1", "host": "esxi-31", "power_state": "poweredOn"}]}]}`

func rebootHost(ctx context.Context, c *object.HostSystem, force bool) error {
	res, err := methods.RebootHost_Task(ctx, c.Client(), &types.RebootHost_Task{This: c.Reference(), Force: force})
	if err != nil {
		return err
	}
	return object.NewTask(c.Client(), res.Returnval).Wait(ctx)
}

func TestPassthroughWaitsForTheHostsReboot(t *testing.T) {
	tl, c := startConnectedLab(t, rebootTopology)
	ctx := context.Background()
	h, other := tl.hosts[0], tl.hosts[1]
	var hs mo.HostSystem
	host := object.NewHostSystem(c.Client, h.Ref)
	if err := host.Properties(ctx, h.Ref, []string{"capability"}, &hs); err != nil {
		t.Fatal(err)
	}
	if r := hs.Capability.DeviceRebindWithoutRebootSupported; r == nil || *r {
		t.Fatalf("a host that needs a reboot says so in its capability: %v", r)
	}
	if err := setPassthru(ctx, c, h, true, h.GPUs[0].PciID); err != nil {
		t.Fatal(err)
	}
	if err := setPassthru(ctx, c, other, true, other.GPUs[0].PciID); err != nil {
		t.Fatal(err)
	}
	before := tl.state(t)
	if g := before.Hosts[0].GPUs[0]; !g.PassthruEnabled || g.PassthruActive {
		t.Fatalf("the change waits for the reboot: %+v", g)
	}
	if g := before.Hosts[1].GPUs[0]; !g.PassthruEnabled || !g.PassthruActive {
		t.Fatalf("a host that rebinds takes the change at once: %+v", g)
	}

	expectFault(t, "reboot outside maintenance mode", rebootHost(ctx, host, false), invalidStateMessage)
	after := tl.state(t)
	if !after.Hosts[0].BootTime.Equal(*before.Hosts[0].BootTime) || after.VMs[0].PowerState != "poweredOn" ||
		after.Hosts[0].Reboots != 0 {
		t.Fatalf("a refused reboot changes nothing: %+v", after.Hosts[0])
	}

	if err := rebootHost(ctx, host, true); err != nil {
		t.Fatal(err)
	}
	down := tl.state(t)
	if down.Hosts[0].ConnectionState != "notResponding" || down.VMs[0].PowerState != "poweredOff" {
		t.Fatalf("the host is away and its VM stopped: %s, %s", down.Hosts[0].ConnectionState, down.VMs[0].PowerState)
	}
	expectFault(t, "reboot while away", rebootHost(ctx, host, true), "notResponding")
	deadline := time.Now().Add(5 * time.Second)
	for tl.state(t).Hosts[0].ConnectionState != "connected" {
		if time.Now().After(deadline) {
			t.Fatal("the host did not come back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	back := tl.state(t)
	hj := back.Hosts[0]
	if !hj.BootTime.After(*before.Hosts[0].BootTime) || hj.Reboots != 1 || !hj.GPUs[0].PassthruActive ||
		hj.GPUs[1].PassthruEnabled || hj.GPUs[1].PassthruActive || hj.MaintenanceMode {
		t.Fatalf("back with a new boot time and the pending change active: %+v", hj)
	}
	if back.VMs[0].PowerState != "poweredOff" {
		t.Fatalf("the VM stays powered off: %s", back.VMs[0].PowerState)
	}
	if err := host.Properties(ctx, h.Ref, []string{"config.pciPassthruInfo", "runtime"}, &hs); err != nil {
		t.Fatal(err)
	}
	active := false
	for _, info := range hs.Config.PciPassthruInfo {
		if e := info.GetHostPciPassthruInfo(); e.Id == h.GPUs[0].PciID {
			active = e.PassthruActive
		}
	}
	if !active || !hs.Runtime.BootTime.Equal(*hj.BootTime) ||
		hs.Runtime.ConnectionState != types.HostSystemConnectionStateConnected {
		t.Fatalf("vCenter's view follows: %+v", hs.Runtime)
	}
}

func TestRebootInMaintenanceModeNeedsNoForce(t *testing.T) {
	tl, c := startConnectedLab(t, rebootTopology)
	ctx := context.Background()
	host := object.NewHostSystem(c.Client, tl.hosts[1].Ref)
	if err := waitTask(host.EnterMaintenanceMode(ctx, 60, false, nil)); err != nil {
		t.Fatal(err)
	}
	if err := rebootHost(ctx, host, false); err != nil {
		t.Fatal(err)
	}
	if s := tl.state(t).Hosts[1]; s.ConnectionState != "notResponding" || !s.MaintenanceMode {
		t.Fatalf("rebooting, still in maintenance mode: %+v", s)
	}
}
