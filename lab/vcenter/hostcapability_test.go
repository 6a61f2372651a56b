package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
)

// Every lab host fills capability (package hostconfig), as a connected ESXi host does, with whether its devices
// rebind without a reboot.
func TestHostCapability(t *testing.T) {
	tl := startLab(t)
	c := tl.client(t)
	for _, h := range tl.hosts {
		var host mo.HostSystem
		if err := c.RetrieveOne(context.Background(), h.Ref, []string{"capability"}, &host); err != nil {
			t.Fatal(err)
		}
		hc := host.Capability
		if hc == nil || !hc.VmotionSupported || hc.MaxRunningVMs == 0 || hc.DeviceRebindWithoutRebootSupported == nil ||
			*hc.DeviceRebindWithoutRebootSupported == h.rebindNeedsReboot {
			t.Errorf("host %s capability: %+v", h.Name, hc)
		}
	}
}
