package clusters

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/topology"
)

func TestClusterAutomationMerge(t *testing.T) {
	drs := DRSConfig(&topology.AutomationSpec{Enabled: true, Behavior: "fullyAutomated"})
	drs = mergeDRS(drs, &types.ClusterDrsConfigInfo{Enabled: types.NewBool(false)})
	if *drs.Enabled || drs.DefaultVmBehavior != "fullyAutomated" || drs.VmotionRate != defaultMigrationRate {
		t.Errorf("only enabled changes: %+v", drs)
	}
	dpm := mergeDPM(DPMConfig(&topology.AutomationSpec{Enabled: false, Behavior: "manual"}),
		&types.ClusterDpmConfigInfo{DefaultDpmBehavior: "automated"})
	if *dpm.Enabled || dpm.DefaultDpmBehavior != "automated" {
		t.Errorf("only the behavior changes: %+v", dpm)
	}
	options := mergeOptions([]types.BaseOptionValue{&types.OptionValue{Key: "a", Value: "1"}, &types.OptionValue{Key: "b", Value: "2"}},
		[]types.BaseOptionValue{&types.OptionValue{Key: "a", Value: ""}, &types.OptionValue{Key: "c", Value: "3"}})
	if len(options) != 2 || options[0].GetOptionValue().Key != "b" || options[1].GetOptionValue().Key != "c" {
		t.Errorf("options set by key, empty value removes: %v", options)
	}
	f := validateAutomation(&types.ClusterConfigSpecEx{DpmConfig: &types.ClusterDpmConfigInfo{DefaultDpmBehavior: "sometimes"}})
	if f == nil || !strings.Contains(f.Msg, "spec.dpmConfig.defaultDpmBehavior") {
		t.Errorf("invalid DPM behavior: %v", f)
	}
}
