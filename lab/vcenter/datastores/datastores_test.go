package datastores

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A datacenter's datastore is one object with a vCenter id, mounted on every host, whose free space stays between
// zero and its capacity, also after a client refreshes it.
func TestSharedDatastore(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c
	var dc mo.Datacenter
	pc := property.DefaultCollector(c.Client)
	if err := pc.RetrieveOne(ctx, tl.dc, []string{"datastore"}, &dc); err != nil {
		t.Fatal(err)
	}
	if len(dc.Datastore) != 1 || !strings.HasPrefix(dc.Datastore[0].Value, "datastore-") {
		t.Fatalf("datacenter datastores: got %v, want one datastore-<n>", dc.Datastore)
	}
	ref := dc.Datastore[0]
	check := func(when string) {
		var ds mo.Datastore
		if err := pc.RetrieveOne(ctx, ref, []string{"host", "summary", "info", "vm"}, &ds); err != nil {
			t.Fatal(err)
		}
		if len(ds.Host) != len(tl.hosts) {
			t.Errorf("%s: datastore mounted on %d hosts, want %d", when, len(ds.Host), len(tl.hosts))
		}
		if ds.Summary.Datastore == nil || *ds.Summary.Datastore != ref {
			t.Errorf("%s: summary.datastore %v, want %v", when, ds.Summary.Datastore, ref)
		}
		if free := ds.Summary.FreeSpace; free < 0 || free > ds.Summary.Capacity || free == ds.Summary.Capacity {
			t.Errorf("%s: free space %d of %d, want above zero and below capacity (the VMs' disks)", when, free,
				ds.Summary.Capacity)
		}
		if ds.Info.GetDatastoreInfo().FreeSpace != ds.Summary.FreeSpace {
			t.Errorf("%s: info.freeSpace %d, summary.freeSpace %d", when, ds.Info.GetDatastoreInfo().FreeSpace,
				ds.Summary.FreeSpace)
		}
		if len(ds.Vm) != len(tl.vms) {
			t.Errorf("%s: datastore lists %d VMs, want %d", when, len(ds.Vm), len(tl.vms))
		}
	}
	check("at start")
	for _, h := range tl.hosts {
		var host mo.HostSystem
		if err := pc.RetrieveOne(ctx, h, []string{"datastore"}, &host); err != nil {
			t.Fatal(err)
		}
		if len(host.Datastore) != 1 || host.Datastore[0] != ref {
			t.Errorf("host %s datastores: got %v, want [%v]", h.Value, host.Datastore, ref)
		}
	}
	if _, err := methods.RefreshDatastore(ctx, c.Client, &types.RefreshDatastore{This: ref}); err != nil {
		t.Fatal(err)
	}
	check("after RefreshDatastore")
}
