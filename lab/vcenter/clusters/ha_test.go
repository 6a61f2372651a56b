package clusters

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// HA switched on and off through ReconfigureComputeResource_Task shows in configurationEx.dasConfig, and a spec
// that leaves HA out keeps it as it is.
func TestClusterHAReconfigure(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c
	cluster := object.NewClusterComputeResource(c.Client, tl.cluster)
	reconfigure := func(spec *types.ClusterConfigSpecEx) {
		t.Helper()
		task, err := cluster.Reconfigure(ctx, spec, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	das := func() types.ClusterDasConfigInfo {
		t.Helper()
		var cr mo.ClusterComputeResource
		if err := cluster.Properties(ctx, cluster.Reference(), []string{"configurationEx"}, &cr); err != nil {
			t.Fatal(err)
		}
		return cr.ConfigurationEx.(*types.ClusterConfigInfoEx).DasConfig
	}
	reconfigure(&types.ClusterConfigSpecEx{DasConfig: &types.ClusterDasConfigInfo{Enabled: types.NewBool(true),
		HostMonitoring: string(types.ClusterDasConfigInfoServiceStateDisabled)}})
	if got := das(); !isTrue(got.Enabled) || got.HostMonitoring != "disabled" || got.VmMonitoring == "" {
		t.Fatalf("after enabling HA: %+v", got)
	}
	reconfigure(&types.ClusterConfigSpecEx{DrsConfig: &types.ClusterDrsConfigInfo{Enabled: types.NewBool(true)}})
	if got := das(); !isTrue(got.Enabled) {
		t.Errorf("a spec without HA changed HA: %+v", got)
	}
	reconfigure(&types.ClusterConfigSpecEx{DasConfig: &types.ClusterDasConfigInfo{Enabled: types.NewBool(false)}})
	if got := das(); isTrue(got.Enabled) || got.HostMonitoring != "disabled" {
		t.Errorf("after disabling HA: %+v", got)
	}
}

// A DRS rule added through ReconfigureComputeResource_Task shows in configurationEx and in the older configuration,
// which clients still read.
func TestClusterRuleInBothConfigurations(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c
	cluster := object.NewClusterComputeResource(c.Client, tl.cluster)
	rule := &types.ClusterAffinityRuleSpec{ClusterRuleInfo: types.ClusterRuleInfo{Name: "together",
		Enabled: types.NewBool(true)}, Vm: tl.vms[:2]}
	task, err := cluster.Reconfigure(ctx, &types.ClusterConfigSpecEx{RulesSpec: []types.ClusterRuleSpec{{
		ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationAdd}, Info: rule}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var got mo.ClusterComputeResource
	if err := c.RetrieveOne(ctx, tl.cluster, []string{"configuration", "configurationEx"}, &got); err != nil {
		t.Fatal(err)
	}
	ex := got.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if len(got.Configuration.Rule) != 1 || len(ex.Rule) != 1 ||
		got.Configuration.Rule[0].GetClusterRuleInfo().Name != "together" {
		t.Errorf("rules: configuration %v, configurationEx %v", got.Configuration.Rule, ex.Rule)
	}
	if isTrue(got.Configuration.DrsConfig.Enabled) != isTrue(ex.DrsConfig.Enabled) {
		t.Error("configuration.drsConfig differs from configurationEx.drsConfig")
	}

	// The older ReconfigureCluster_Task edits the rule by the same rules.
	edited := got.Configuration.Rule[0].(*types.ClusterAffinityRuleSpec)
	edited.Enabled = types.NewBool(false)
	res, err := methods.ReconfigureCluster_Task(ctx, c.Client, &types.ReconfigureCluster_Task{This: tl.cluster,
		Modify: true, Spec: types.ClusterConfigSpec{RulesSpec: []types.ClusterRuleSpec{{
			ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: edited}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := object.NewTask(c.Client, res.Returnval).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RetrieveOne(ctx, tl.cluster, []string{"configuration"}, &got); err != nil {
		t.Fatal(err)
	}
	if isTrue(got.Configuration.Rule[0].GetClusterRuleInfo().Enabled) {
		t.Error("the rule is still enabled after ReconfigureCluster_Task")
	}
}
