package datastores

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// An empty datastore enters and leaves maintenance mode once each; one that holds VMs stays in service.
func TestDatastoreMaintenanceMode(t *testing.T) {
	tl := startLab(t, "nfs.lab.local:/srv/isos")
	ctx := context.Background()
	c := tl.c
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.hosts[0], []string{"configManager", "datastore"}, &host); err != nil {
		t.Fatal(err)
	}
	busy := host.Datastore[0]
	mounted, err := methods.CreateNasDatastore(ctx, c.Client, &types.CreateNasDatastore{
		This: *host.ConfigManager.DatastoreSystem, Spec: types.HostNasVolumeSpec{RemoteHost: "nfs.lab.local",
			RemotePath: "/srv/isos", LocalPath: "isos", AccessMode: "readOnly", Type: "NFS"}})
	if err != nil {
		t.Fatal(err)
	}
	empty := mounted.Returnval
	mode := func(ref types.ManagedObjectReference) string {
		var ds mo.Datastore
		if err := c.RetrieveOne(ctx, ref, []string{"summary"}, &ds); err != nil {
			t.Fatal(err)
		}
		return ds.Summary.MaintenanceMode
	}
	enter := func(ref types.ManagedObjectReference) error {
		res, err := methods.DatastoreEnterMaintenanceMode(ctx, c.Client,
			&types.DatastoreEnterMaintenanceMode{This: ref})
		if err != nil {
			return err
		}
		return object.NewTask(c.Client, *res.Returnval.Task).Wait(ctx)
	}
	exit := func(ref types.ManagedObjectReference) error {
		res, err := methods.DatastoreExitMaintenanceMode_Task(ctx, c.Client,
			&types.DatastoreExitMaintenanceMode_Task{This: ref})
		if err != nil {
			return err
		}
		return object.NewTask(c.Client, res.Returnval).Wait(ctx)
	}

	if err := enter(empty); err != nil || mode(empty) != "inMaintenance" {
		t.Fatalf("entering maintenance: %v, mode %s", err, mode(empty))
	}
	if err := enter(empty); err == nil || !strings.Contains(err.Error(), "current state") {
		t.Errorf("entering maintenance twice: got %v, want InvalidState", err)
	}
	if err := exit(empty); err != nil || mode(empty) != "normal" {
		t.Fatalf("exiting maintenance: %v, mode %s", err, mode(empty))
	}
	if err := exit(empty); err == nil {
		t.Error("exiting maintenance of a datastore in service was accepted")
	}
	if err := enter(busy); err == nil || mode(busy) != "normal" {
		t.Errorf("a datastore with VMs: %v, mode %s; want refused and in service", err, mode(busy))
	}
}
