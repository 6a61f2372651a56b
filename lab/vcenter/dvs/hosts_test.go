package dvs

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// A host that joins a distributed switch gets its uplink ports, takes physical NICs on them with an edit (a NIC the
// host lacks is refused) and leaves with its ports.
func TestDVSHostMembers(t *testing.T) {
	tl := startLab(t)
	c, folders := tl.c, tl.folders
	ctx := context.Background()
	dvs := labtest.CreateDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-h",
		UplinkPortPolicy: &types.DVSNameArrayUplinkPortPolicy{UplinkPortName: []string{"uplink-a", "uplink-b"}}})
	host := tl.hosts[0]
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

// A switch keeps the VMware settings it was created with; a reconfiguration against an older version is refused,
// one against the current version applies its fields and private VLANs and counts the version up.
func TestDVSReconfigure(t *testing.T) {
	tl := startLab(t)
	c, folders := tl.c, tl.folders
	ctx := context.Background()
	ref := labtest.CreateDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-r"}).Reference()
	task, err := folders.NetworkFolder.CreateDVS(ctx, types.DVSCreateSpec{ConfigSpec: &types.VMwareDVSConfigSpec{
		DVSConfigSpec: types.DVSConfigSpec{Name: "dvs-jumbo"}, MaxMtu: 9000,
		LinkDiscoveryProtocolConfig: &types.LinkDiscoveryProtocolConfig{Protocol: "lldp", Operation: "both"}}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	config := func(ref types.ManagedObjectReference) *types.VMwareDVSConfigInfo {
		var sw mo.DistributedVirtualSwitch
		if err := c.RetrieveOne(ctx, ref, []string{"config"}, &sw); err != nil {
			t.Fatal(err)
		}
		return sw.Config.(*types.VMwareDVSConfigInfo)
	}
	if jumbo := config(info.Result.(types.ManagedObjectReference)); jumbo.MaxMtu != 9000 ||
		jumbo.LinkDiscoveryProtocolConfig.Protocol != "lldp" {
		t.Errorf("created with MTU 9000 and LLDP: %d, %+v", jumbo.MaxMtu, jumbo.LinkDiscoveryProtocolConfig)
	}
	if plain := config(ref); plain.MaxMtu != 1500 || plain.ConfigVersion != "1" ||
		plain.LinkDiscoveryProtocolConfig == nil {
		t.Errorf("created with no settings: MTU %d, version %q, discovery %+v", plain.MaxMtu, plain.ConfigVersion,
			plain.LinkDiscoveryProtocolConfig)
	}
	reconfigure := func(spec *types.VMwareDVSConfigSpec) error {
		res, err := methods.ReconfigureDvs_Task(ctx, c.Client, &types.ReconfigureDvs_Task{This: ref, Spec: spec})
		if err != nil {
			return err
		}
		return object.NewTask(c.Client, res.Returnval).Wait(ctx)
	}
	pvlan := func(op string, id int32) []types.VMwareDVSPvlanConfigSpec {
		return []types.VMwareDVSPvlanConfigSpec{{Operation: op, PvlanEntry: types.VMwareDVSPvlanMapEntry{
			PrimaryVlanId: 10, SecondaryVlanId: id, PvlanType: "isolated"}}}
	}
	if err := reconfigure(&types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{ConfigVersion: "0",
		Description: "stale"}}); err == nil || !strings.Contains(err.Error(), "concurrent") {
		t.Errorf("an older config version: got %v, want ConcurrentAccess", err)
	}
	if err := reconfigure(&types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{ConfigVersion: "1",
		Description: "lab"}, MaxMtu: 9000, PvlanConfigSpec: pvlan("add", 11)}); err != nil {
		t.Fatal(err)
	}
	if err := reconfigure(&types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{ConfigVersion: "2"},
		PvlanConfigSpec: pvlan("remove", 99)}); err == nil {
		t.Error("removing a private VLAN the switch lacks was accepted")
	}
	if err := reconfigure(&types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{ConfigVersion: "2",
		DefaultPortConfig: &types.VMwareDVSPortSetting{MacManagementPolicy: &types.DVSMacManagementPolicy{
			AllowPromiscuous: types.NewBool(true)}}}}); err != nil {
		t.Fatal(err)
	}
	mac := config(ref).DefaultPortConfig.(*types.VMwareDVSPortSetting).MacManagementPolicy
	if !*mac.AllowPromiscuous || mac.ForgedTransmits == nil || *mac.ForgedTransmits || mac.MacLearningPolicy == nil {
		t.Errorf("after allowing promiscuous mode alone, MAC management %+v: the other settings should stay", mac)
	}
	got := config(ref)
	if got.Description != "lab" || got.MaxMtu != 9000 || got.ConfigVersion != "3" || len(got.PvlanConfig) != 1 ||
		got.PvlanConfig[0].SecondaryVlanId != 11 {
		t.Errorf("after the reconfiguration: description %q, MTU %d, version %q, private VLANs %+v", got.Description,
			got.MaxMtu, got.ConfigVersion, got.PvlanConfig)
	}
}
