package datastores

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// An NFS export the lab serves mounts as one datastore per datacenter, read-only where asked, and shows in each
// host's file systems; an export the lab does not serve, a name in use and a second mount on a host are refused.
func TestNasDatastores(t *testing.T) {
	tl := startLab(t, "nfs.lab.local:/srv/isos")
	ctx := context.Background()
	c := tl.c
	hosts := make([]mo.HostSystem, 2)
	for i := range hosts {
		if err := c.RetrieveOne(ctx, tl.hosts[i], []string{"configManager"}, &hosts[i]); err != nil {
			t.Fatal(err)
		}
	}
	mount := func(host int, name, server, path, mode string) (types.ManagedObjectReference, error) {
		res, err := methods.CreateNasDatastore(ctx, c.Client, &types.CreateNasDatastore{
			This: *hosts[host].ConfigManager.DatastoreSystem, Spec: types.HostNasVolumeSpec{RemoteHost: server,
				RemotePath: path, LocalPath: name, AccessMode: mode, Type: "NFS"}})
		if err != nil {
			return types.ManagedObjectReference{}, err
		}
		return res.Returnval, nil
	}

	if _, err := mount(0, "isos", "nfs.lab.local", "/srv/vms", "readWrite"); err == nil ||
		!strings.Contains(err.Error(), "Unable to connect to NFS server") {
		t.Errorf("an export the lab does not serve: got %v, want PlatformConfigFault", err)
	}
	if _, err := mount(0, "dc-ds", "nfs.lab.local", "/srv/isos", "readOnly"); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Errorf("the name of the datacenter's datastore: got %v, want DuplicateName", err)
	}
	first, err := mount(0, "isos", "nfs.lab.local", "/srv/isos", "readOnly")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Value, "datastore-") {
		t.Errorf("NFS datastore id %s, want datastore-<n>", first.Value)
	}
	if _, err := mount(0, "isos", "nfs.lab.local", "/srv/isos", "readOnly"); err == nil {
		t.Error("mounting the same export twice on a host was accepted")
	}
	second, err := mount(1, "isos", "nfs.lab.local", "/srv/isos", "readWrite")
	if err != nil || second != first {
		t.Fatalf("the second host's mount: %v, %v; want the same datastore %s", second, err, first)
	}

	var ds mo.Datastore
	if err := c.RetrieveOne(ctx, first, []string{"summary", "info", "host"}, &ds); err != nil {
		t.Fatal(err)
	}
	nas, ok := ds.Info.(*types.NasDatastoreInfo)
	if !ok || nas.Nas.RemoteHost != "nfs.lab.local" || nas.Nas.RemotePath != "/srv/isos" || ds.Summary.Type != "NFS" {
		t.Fatalf("datastore %s: type %s, info %#v", first.Value, ds.Summary.Type, ds.Info)
	}
	modes := map[string]string{}
	for _, m := range ds.Host {
		modes[m.Key.Value] = m.MountInfo.AccessMode
	}
	if modes[tl.hosts[0].Value] != "readOnly" || modes[tl.hosts[1].Value] != "readWrite" {
		t.Errorf("mounts %v, want readOnly on the first host and readWrite on the second", modes)
	}

	var storage mo.HostStorageSystem
	if err := c.RetrieveOne(ctx, *hosts[0].ConfigManager.StorageSystem, []string{"fileSystemVolumeInfo"},
		&storage); err != nil {
		t.Fatal(err)
	}
	volumes := map[string]string{}
	for _, m := range storage.FileSystemVolumeInfo.MountInfo {
		volume := m.Volume.GetHostFileSystemVolume()
		volumes[volume.Name] = volume.Type + "/" + m.MountInfo.AccessMode
	}
	if volumes["isos"] != "NFS/readOnly" || volumes["dc-ds"] == "" {
		t.Errorf("the first host's file systems: %v, want isos (NFS, read-only) and dc-ds", volumes)
	}
}
