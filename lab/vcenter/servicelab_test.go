package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/hostservices"
)

// Restarting Xorg through a host's service system applies the host's graphics configuration to the lab's GPUs of
// that host, and /lab/state counts it.
func TestXorgRestartAppliesGraphics(t *testing.T) {
	tl := startLab(t)
	c := tl.client(t)
	ctx := context.Background()
	host := tl.hosts[0]
	if _, err := methods.UpdateGraphicsConfig(ctx, c, &types.UpdateGraphicsConfig{This: host.graphics.Self,
		Config: types.HostGraphicsConfig{HostDefaultGraphicsType: gpu.GraphicsSharedDirect}}); err != nil {
		t.Fatal(err)
	}
	active := func() string {
		var h mo.HostSystem
		if err := c.RetrieveOne(ctx, host.Ref, []string{"config.graphicsInfo"}, &h); err != nil {
			t.Fatal(err)
		}
		return h.Config.GraphicsInfo[0].GraphicsType
	}
	if got := active(); got == gpu.GraphicsSharedDirect {
		t.Fatalf("graphics type %s before Xorg restarts", got)
	}
	var h mo.HostSystem
	if err := c.RetrieveOne(ctx, host.Ref, []string{"configManager.serviceSystem"}, &h); err != nil {
		t.Fatal(err)
	}
	svc := *h.ConfigManager.ServiceSystem
	if _, err := methods.RestartService(ctx, c, &types.RestartService{This: svc, Id: hostservices.Xorg}); err != nil {
		t.Fatal(err)
	}
	if got := active(); got != gpu.GraphicsSharedDirect {
		t.Errorf("graphics type %s after Xorg restarted, want %s", got, gpu.GraphicsSharedDirect)
	}
	if s := tl.state(t); s.Hosts[0].XorgRestarts != 1 || s.Hosts[1].XorgRestarts != 0 {
		t.Errorf("Xorg restarts in /lab/state: %d and %d, want 1 and 0", s.Hosts[0].XorgRestarts, s.Hosts[1].XorgRestarts)
	}
}
