package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A host that joins a distributed switch gets its uplink ports, takes physical NICs on them with an edit (a NIC the
// host lacks is refused) and leaves with its ports.
func TestDVSHostMembers(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	dvs := createDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-h",
		UplinkPortPolicy: &types.DVSNameArrayUplinkPortPolicy{UplinkPortName: []string{"uplink-a", "uplink-b"}}})
	host := tl.hosts[0].ref
	reconfigure := func(op string, backing types.BaseDistributedVirtualSwitchHostMemberBacking) error {
		task, err := dvs.Reconfigure(ctx, &types.DVSConfigSpec{Host: []types.DistributedVirtualSwitchHostMemberConfigSpec{
			{Operation: op, Host: host, Backing: backing}}})
		if err != nil {
			return err
		}
		return task.Wait(ctx)
	}
	members := func() []types.DistributedVirtualSwitchHostMember {
		var sw mo.DistributedVirtualSwitch
		if err := c.RetrieveOne(ctx, dvs.Reference(), []string{"config"}, &sw); err != nil {
			t.Fatal(err)
		}
		return sw.Config.GetDVSConfigInfo().Host
	}
	uplinkPorts := func() []types.DistributedVirtualPort {
		res, err := methods.FetchDVPorts(ctx, c.Client, &types.FetchDVPorts{This: dvs.Reference(),
			Criteria: &types.DistributedVirtualSwitchPortCriteria{Host: []types.ManagedObjectReference{host},
				UplinkPort: types.NewBool(true)}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Returnval
	}

	if err := reconfigure("add", nil); err != nil {
		t.Fatal(err)
	}
	ports := uplinkPorts()
	if len(ports) != 2 || ports[0].Config.Name != "uplink-a" || ports[1].Config.Name != "uplink-b" ||
		ports[0].ProxyHost == nil || *ports[0].ProxyHost != host {
		t.Fatalf("the host's uplink ports: %+v", ports)
	}
	if m := members(); len(m) != 1 || len(m[0].UplinkPortKey) != 2 {
		t.Fatalf("config.host after the add: %+v", m)
	}
	bad := &types.DistributedVirtualSwitchHostMemberPnicBacking{PnicSpec: []types.DistributedVirtualSwitchHostMemberPnicSpec{
		{PnicDevice: "vmnic9", UplinkPortKey: ports[0].Key}}}
	if err := reconfigure("edit", bad); err == nil || !strings.Contains(err.Error(), "vmnic9") {
		t.Errorf("a NIC the host lacks: got %v, want InvalidArgument", err)
	}
	good := &types.DistributedVirtualSwitchHostMemberPnicBacking{PnicSpec: []types.DistributedVirtualSwitchHostMemberPnicSpec{
		{PnicDevice: "vmnic1", UplinkPortKey: ports[0].Key}}}
	if err := reconfigure("edit", good); err != nil {
		t.Fatal(err)
	}
	backing, ok := members()[0].Config.Backing.(*types.DistributedVirtualSwitchHostMemberPnicBacking)
	if !ok || len(backing.PnicSpec) != 1 || backing.PnicSpec[0].PnicDevice != "vmnic1" ||
		backing.PnicSpec[0].UplinkPortKey != ports[0].Key {
		t.Errorf("the member's NICs after the edit: %+v", members()[0].Config.Backing)
	}
	if err := reconfigure("remove", nil); err != nil {
		t.Fatal(err)
	}
	if m, p := members(), uplinkPorts(); len(m) != 0 || len(p) != 0 {
		t.Errorf("after the host left: members %+v, its uplink ports %+v", m, p)
	}
}
