package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// The environment browser offers up to vmx-21; UpgradeVM_Task goes to the version asked, or the newest, and refuses
// going back.
func TestHardwareUpgrade(t *testing.T) {
	tl, c, _ := startLabFolders(t)
	ctx := context.Background()
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	var before mo.VirtualMachine
	if err := c.RetrieveOne(ctx, vm.Reference(), []string{"environmentBrowser"}, &before); err != nil {
		t.Fatal(err)
	}
	res, err := methods.QueryConfigOptionDescriptor(ctx, c.Client, &types.QueryConfigOptionDescriptor{
		This: before.EnvironmentBrowser})
	if err != nil {
		t.Fatal(err)
	}
	newest := ""
	for _, d := range res.Returnval {
		if d.UpgradeSupported != nil && *d.UpgradeSupported && d.Key > newest {
			newest = d.Key
		}
	}
	if newest != "vmx-21" {
		t.Fatalf("newest upgradable version %q", newest)
	}
	version := func() string {
		var got mo.VirtualMachine
		if err := c.RetrieveOne(ctx, vm.Reference(), []string{"config.version"}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Config.Version
	}
	upgrade := func(to string) error {
		task, err := vm.UpgradeVM(ctx, to)
		if err != nil {
			return err
		}
		return task.Wait(ctx)
	}
	if err := upgrade("vmx-19"); err != nil || version() != "vmx-19" {
		t.Fatalf("upgrade to vmx-19: %v, now %s", err, version())
	}
	if err := upgrade(""); err != nil || version() != "vmx-21" {
		t.Fatalf("upgrade to the newest: %v, now %s", err, version())
	}
	if err := upgrade("vmx-19"); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("downgrade: %v", err)
	}
}
