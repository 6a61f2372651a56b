package dvs

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// The distributed switch manager lists the switch versions vCenter creates, all recommended, and finds a switch by
// its uuid.
func TestDVSManager(t *testing.T) {
	tl := startLab(t)
	c, folders := tl.c, tl.folders
	ctx := context.Background()
	manager := *c.ServiceContent.DvSwitchManager
	all, err := methods.QueryAvailableDvsSpec(ctx, c.Client, &types.QueryAvailableDvsSpec{This: manager})
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, spec := range all.Returnval {
		versions = append(versions, spec.Version)
	}
	if strings.Join(versions, ",") != "8.0.3,8.0.0,7.0.3,7.0.2,7.0.0,6.6.0" {
		t.Errorf("available versions %v", versions)
	}
	for _, recommended := range []bool{true, false} {
		answer, err := methods.QueryAvailableDvsSpec(ctx, c.Client, &types.QueryAvailableDvsSpec{This: manager,
			Recommended: types.NewBool(recommended)})
		if want := map[bool]int{true: len(all.Returnval), false: 0}[recommended]; err != nil ||
			len(answer.Returnval) != want {
			t.Errorf("recommended=%v: %+v, %v; want %d versions", recommended, answer, err, want)
		}
	}

	created := labtest.CreateDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-a"}).Reference()
	var dvs mo.DistributedVirtualSwitch
	if err := c.RetrieveOne(ctx, created, []string{"uuid"}, &dvs); err != nil {
		t.Fatal(err)
	}
	found, err := methods.QueryDvsByUuid(ctx, c.Client, &types.QueryDvsByUuid{This: manager, Uuid: dvs.Uuid})
	if err != nil || found.Returnval == nil || *found.Returnval != created {
		t.Errorf("switch by uuid %q: %+v, %v; want %s", dvs.Uuid, found, err, created.Value)
	}
	if _, err := methods.QueryDvsByUuid(ctx, c.Client, &types.QueryDvsByUuid{This: manager,
		Uuid: "50 00 00 00 00 00 00 00-00 00 00 00 00 00 00 00"}); err == nil ||
		!strings.Contains(err.Error(), "could not be found") {
		t.Errorf("an unknown uuid: got %v, want NotFound", err)
	}
}

// A distributed switch created through the API lists its uplink port group, and its port groups carry vCenter's
// defaults for every policy their spec leaves out.
func TestDVSCreatedWithDefaults(t *testing.T) {
	tl := startLab(t)
	c, folders := tl.c, tl.folders
	ctx := context.Background()
	dvs := labtest.CreateDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-b"})
	add, err := dvs.AddPortgroup(ctx, []types.DVPortgroupConfigSpec{{Name: "pg-b", NumPorts: 8, Type: "earlyBinding"},
		{Name: "pg-ip-hash", NumPorts: 8, Type: "earlyBinding", DefaultPortConfig: &types.VMwareDVSPortSetting{
			UplinkTeamingPolicy: &types.VmwareUplinkPortTeamingPolicy{Policy: &types.StringPolicy{
				Value: "loadbalance_ip"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := add.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var sw mo.DistributedVirtualSwitch
	if err := c.RetrieveOne(ctx, dvs.Reference(), []string{"config", "portgroup"}, &sw); err != nil {
		t.Fatal(err)
	}
	config := sw.Config.GetDVSConfigInfo()
	if len(config.UplinkPortgroup) != 1 {
		t.Fatalf("config.uplinkPortgroup %v, want the switch's uplink port group", config.UplinkPortgroup)
	}
	if policy, ok := config.UplinkPortPolicy.(*types.DVSNameArrayUplinkPortPolicy); !ok || len(policy.UplinkPortName) != 4 {
		t.Errorf("uplink port policy %#v, want four named uplinks", config.UplinkPortPolicy)
	}
	var pgs []mo.DistributedVirtualPortgroup
	if err := c.Retrieve(ctx, sw.Portgroup, []string{"name", "config"}, &pgs); err != nil {
		t.Fatal(err)
	}
	for _, pg := range pgs {
		uplink := pg.Self == config.UplinkPortgroup[0]
		if pg.Config.Uplink == nil || *pg.Config.Uplink != uplink {
			t.Errorf("port group %s: uplink %v, want %v", pg.Name, pg.Config.Uplink, uplink)
		}
		setting, ok := pg.Config.DefaultPortConfig.(*types.VMwareDVSPortSetting)
		if !ok || setting.MacManagementPolicy == nil || setting.MacManagementPolicy.MacLearningPolicy == nil ||
			*setting.MacManagementPolicy.ForgedTransmits || setting.SecurityPolicy == nil ||
			setting.UplinkTeamingPolicy.ReversePolicy == nil || setting.UplinkTeamingPolicy.FailureCriteria == nil ||
			setting.InShapingPolicy == nil || setting.LacpPolicy == nil {
			t.Errorf("port group %s: default port settings %#v lack vCenter's defaults", pg.Name,
				pg.Config.DefaultPortConfig)
			continue
		}
		if want := map[bool]string{true: "loadbalance_ip", false: "loadbalance_srcid"}[pg.Name == "pg-ip-hash"]; !uplink &&
			setting.UplinkTeamingPolicy.Policy.Value != want {
			t.Errorf("port group %s: teaming %s, want %s", pg.Name, setting.UplinkTeamingPolicy.Policy.Value, want)
		}
	}
}
