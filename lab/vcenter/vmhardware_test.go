package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/envbrowser"
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

// Every disk is listed by its controller, for topology VMs and after a reconfigure adds a disk.
func TestControllersListTheirDevices(t *testing.T) {
	tl, c, _ := startLabFolders(t)
	ctx := context.Background()
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	check := func(when string) int {
		devices, err := vm.Device(ctx)
		if err != nil {
			t.Fatal(err)
		}
		disks := 0
		for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
			key := d.GetVirtualDevice().ControllerKey
			controller, ok := devices.FindByKey(key).(types.BaseVirtualController)
			if !ok {
				continue
			}
			found := false
			for _, k := range controller.GetVirtualController().Device {
				found = found || k == d.GetVirtualDevice().Key
			}
			if !found {
				t.Fatalf("%s: controller %d does not list device %d", when, key, d.GetVirtualDevice().Key)
			}
			disks++
		}
		return disks
	}
	before := check("at start")
	devices, _ := vm.Device(ctx)
	controller, err := devices.FindDiskController("")
	if err != nil {
		t.Fatal(err)
	}
	disk := devices.CreateDisk(controller, types.ManagedObjectReference{}, "")
	disk.CapacityInKB = 1024
	if err := vm.AddDevice(ctx, disk); err != nil {
		t.Fatal(err)
	}
	if after := check("after adding a disk"); after != before+1 {
		t.Fatalf("%d disks after adding one to %d", after, before)
	}
}

// The version UpgradeVM_Task goes to by default is the newest the environment browser offers.
func TestNewestHardwareVersionIsOffered(t *testing.T) {
	versions := envbrowser.HardwareVersions()
	if last := versions[len(versions)-1]; last != hardwareKey(newestHardwareVersion) {
		t.Errorf("newest offered %s, UpgradeVM_Task's default %s", last, hardwareKey(newestHardwareVersion))
	}
}
