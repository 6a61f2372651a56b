package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
)

// A template leaves its resource pool and comes back into the one MarkAsVirtualMachine names; once destroyed, no
// pool lists it and a container view of all VMs reads without ManagedObjectNotFound.
func TestTemplatesLeaveTheirResourcePool(t *testing.T) {
	tl, c, _ := startLabFolders(t)
	ctx := context.Background()
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	var before mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"resourcePool", "runtime.host"}, &before); err != nil {
		t.Fatal(err)
	}
	pool := object.NewResourcePool(c.Client, *before.ResourcePool)
	poolVMs := func() map[string]bool {
		var p mo.ResourcePool
		if err := pool.Properties(ctx, pool.Reference(), []string{"vm"}, &p); err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		for _, ref := range p.Vm {
			in[ref.Value] = true
		}
		return in
	}
	if err := vm.MarkAsTemplate(ctx); err != nil {
		t.Fatal(err)
	}
	if poolVMs()[vm.Reference().Value] {
		t.Fatal("the template is still in its resource pool's vm list")
	}
	host := object.NewHostSystem(c.Client, *before.Runtime.Host)
	if err := vm.MarkAsVirtualMachine(ctx, *pool, host); err != nil {
		t.Fatal(err)
	}
	if !poolVMs()[vm.Reference().Value] {
		t.Fatal("MarkAsVirtualMachine did not put the VM into the pool")
	}
	if err := vm.MarkAsTemplate(ctx); err != nil {
		t.Fatal(err)
	}
	task, err := vm.Destroy(ctx)
	if err != nil || task.Wait(ctx) != nil {
		t.Fatalf("destroy: %v", err)
	}
	v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder,
		[]string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name"}, &vms); err != nil {
		t.Fatalf("listing VMs after destroying a template: %v", err)
	}
	if poolVMs()[vm.Reference().Value] {
		t.Fatal("the destroyed template is still listed by its pool")
	}
}
