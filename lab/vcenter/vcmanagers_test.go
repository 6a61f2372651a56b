package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// The lab serves package vcmanagers' managers and package about's products (their own tests hold the behaviour):
// vCenter's roles, the ScheduledTaskManager, SetField in front of the simulator with its value in /lab/state, and
// vCenter's and the hosts' versions.
func TestVCenterManagersWired(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	if a := c.ServiceContent.About; a.ApiVersion != "8.0.3.0" {
		t.Errorf("vCenter's apiVersion: %s", a.ApiVersion)
	}
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.hosts[0].Ref, []string{"config.product"}, &host); err != nil {
		t.Fatal(err)
	}
	if host.Config == nil || host.Config.Product.ApiVersion != "8.0.2.0" {
		t.Errorf("a host's product: %+v", host.Config)
	}
	var auth mo.AuthorizationManager
	if err := c.RetrieveOne(ctx, *c.ServiceContent.AuthorizationManager, []string{"roleList"}, &auth); err != nil {
		t.Fatal(err)
	}
	roles := map[string]int32{}
	for _, role := range auth.RoleList {
		roles[role.Name] = role.RoleId
	}
	if id, ok := roles["VirtualMachinePowerUser"]; !ok || id != 4 {
		t.Errorf("vCenter's roles: %v", roles)
	}
	if _, err := methods.RetrieveEntityScheduledTask(ctx, c.Client, &types.RetrieveEntityScheduledTask{
		This: *c.ServiceContent.ScheduledTaskManager}); err != nil {
		t.Errorf("the ScheduledTaskManager: %v", err)
	}

	m, err := object.GetCustomFieldsManager(c.Client)
	if err != nil {
		t.Fatal(err)
	}
	cluster := tl.clusters[0]
	def, err := m.Add(ctx, "gpuops.vgpu.lock."+cluster.Value, "ClusterComputeResource", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"first", "second"} {
		if err := m.Set(ctx, cluster, def.Key, value); err != nil {
			t.Fatal(err)
		}
	}
	var e mo.ManagedEntity
	if err := c.RetrieveOne(ctx, cluster, []string{"customValue"}, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.CustomValue) != 1 {
		t.Errorf("the cluster's values after two SetField: %v", e.CustomValue)
	}
	if got := tl.state(t).Clusters[0].CustomValues; len(got) != 1 || got["gpuops.vgpu.lock."+cluster.Value] != "second" {
		t.Errorf("custom values after two SetField: %v", got)
	}
}
