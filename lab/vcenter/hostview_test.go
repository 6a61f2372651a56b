package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/hostd"
	"vcsim/labtest"
)

const testESXiPassword = "root-s3cret"

// hostdSession is a client of a host's endpoint logged in as the host's root.
func (tl *testLab) hostdSession(t *testing.T, hostName string) *vim25.Client {
	t.Helper()
	tl.Lab.hostdLogin = hostd.Login{ESXiUsername: "root", ESXiPassword: testESXiPassword,
		VCenterUsername: "lab", VCenterPassword: "s3cret"}
	c := labtest.HostClient(t, tl.sdk, hostName)
	if err := labtest.LoginAs(t, c, "root", testESXiPassword); err != nil {
		t.Fatal(err)
	}
	return c
}

// hostdHost reads properties of ha-host through a host's endpoint.
func hostdHost(t *testing.T, c *vim25.Client, props ...string) mo.HostSystem {
	t.Helper()
	var host mo.HostSystem
	ref := types.ManagedObjectReference{Type: "HostSystem", Value: "ha-host"}
	if err := property.DefaultCollector(c).RetrieveOne(context.Background(), ref, props, &host); err != nil {
		t.Fatal(err)
	}
	return host
}

func (tl *testLab) vmNamed(t *testing.T, name string) types.ManagedObjectReference {
	t.Helper()
	for _, ref := range tl.vms {
		if vm := tl.vm(ref); vm != nil && vm.Name == name {
			return ref
		}
	}
	t.Fatalf("no VM %s", name)
	return types.ManagedObjectReference{}
}

// The host's auto-start configuration changes through the host view and reads back through vCenter, as the host's
// config.autoStart; a start order already taken moves the other VM one place later.
func TestAutoStartThroughTheHost(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
	ctx := context.Background()
	host := hostdHost(t, c, "configManager.autoStartManager", "vm")
	manager := *host.ConfigManager.AutoStartManager
	vm := host.Vm[0]
	entry := types.AutoStartPowerInfo{Key: vm, StartAction: "powerOn", StartOrder: 1, StartDelay: -1,
		StopAction: "systemDefault", StopDelay: -1, WaitForHeartbeat: "systemDefault"}
	spec := types.HostAutoStartManagerConfig{Defaults: &types.AutoStartDefaults{Enabled: types.NewBool(true),
		StartDelay: 200, StopAction: "guestShutdown"}, PowerInfo: []types.AutoStartPowerInfo{entry}}
	if _, err := methods.ReconfigureAutostart(ctx, c, &types.ReconfigureAutostart{This: manager, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	bad := spec
	bad.PowerInfo = []types.AutoStartPowerInfo{entry}
	bad.PowerInfo[0].StartOrder = 0
	_, err := methods.ReconfigureAutostart(ctx, c, &types.ReconfigureAutostart{This: manager, Spec: bad})
	if !labtest.IsFault(err, "InvalidArgument") {
		t.Errorf("start order 0: got %v, want InvalidArgument", err)
	}

	vc := tl.client(t)
	var seen mo.HostSystem
	if err := property.DefaultCollector(vc.Client).RetrieveOne(ctx, tl.hosts[0].Ref, []string{"config.autoStart"},
		&seen); err != nil {
		t.Fatal(err)
	}
	got := seen.Config.AutoStart
	if got == nil || got.Defaults == nil || !*got.Defaults.Enabled || got.Defaults.StartDelay != 200 ||
		got.Defaults.StopDelay != 120 || got.Defaults.StopAction != "guestShutdown" {
		t.Fatalf("config.autoStart through vCenter: %+v", got)
	}
	want := tl.vmNamed(t, "vm-1")
	if len(got.PowerInfo) != 1 || got.PowerInfo[0].Key != want || got.PowerInfo[0].StartOrder != 1 {
		t.Errorf("powerInfo through vCenter: %+v, want vm-1 first", got.PowerInfo)
	}
}
