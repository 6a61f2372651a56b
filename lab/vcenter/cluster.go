package main

import (
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/topology"
)

const defaultMigrationRate = 3

// drsConfig is what a cluster's configurationEx.drsConfig holds for a topology's "drs" entry.
func drsConfig(spec *topology.AutomationSpec) types.ClusterDrsConfigInfo {
	return types.ClusterDrsConfigInfo{
		Enabled:                   types.NewBool(spec.Enabled),
		EnableVmBehaviorOverrides: types.NewBool(true),
		DefaultVmBehavior:         types.DrsBehavior(spec.Behavior),
		VmotionRate:               defaultMigrationRate,
	}
}

func dpmConfig(spec *topology.AutomationSpec) *types.ClusterDpmConfigInfo {
	return &types.ClusterDpmConfigInfo{
		Enabled:             types.NewBool(spec.Enabled),
		DefaultDpmBehavior:  types.DpmBehavior(spec.Behavior),
		HostPowerActionRate: defaultMigrationRate,
	}
}

// reconfigureCluster adds DRS and DPM to the simulator's ReconfigureComputeResource_Task, which ignores both:
// with modify=true only the fields the spec sets change; with modify=false the spec replaces the configuration and
// unset fields take vCenter's defaults. The simulator's part (rules, groups, overrides) runs after; if it fails,
// DRS and DPM are restored.
func (l *Lab) reconfigureCluster(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	req, ok := l.inflight.(*types.ReconfigureComputeResource_Task)
	if !ok || req.This != *t.Info.Entity {
		return original(t)
	}
	spec, isEx := req.Spec.(*types.ClusterConfigSpecEx)
	cluster, isCluster := simulator.Map.Get(req.This).(*simulator.ClusterComputeResource)
	if !isEx || !isCluster {
		return original(t)
	}
	if f := validateAutomation(spec); f != nil {
		return l.taskResult(t, nil, f)
	}
	cfg := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	drs, dpm, das := cfg.DrsConfig, cfg.DpmConfigInfo, cfg.DasConfig
	cfg.DasConfig = mergeDAS(cfg.DasConfig, spec.DasConfig)
	if req.Modify {
		cfg.DrsConfig = mergeDRS(cfg.DrsConfig, spec.DrsConfig)
		cfg.DpmConfigInfo = mergeDPM(cfg.DpmConfigInfo, spec.DpmConfig)
	} else {
		cfg.DrsConfig = mergeDRS(drsConfig(&topology.AutomationSpec{Behavior: string(types.DrsBehaviorFullyAutomated)}),
			spec.DrsConfig)
		cfg.DpmConfigInfo = mergeDPM(dpmConfig(&topology.AutomationSpec{Behavior: string(types.DpmBehaviorManual)}),
			spec.DpmConfig)
	}
	result, fault := original(t)
	if fault != nil {
		cfg.DrsConfig, cfg.DpmConfigInfo, cfg.DasConfig = drs, dpm, das
		return result, fault
	}
	syncLegacyConfiguration(cluster)
	l.update(cluster, types.PropertyChange{Name: "configurationEx", Val: cfg},
		types.PropertyChange{Name: "configuration", Val: cluster.Configuration})
	l.logf("cluster %s: DRS enabled=%v %s, DPM enabled=%v %s", cluster.Name, isTrue(cfg.DrsConfig.Enabled),
		cfg.DrsConfig.DefaultVmBehavior, isTrue(cfg.DpmConfigInfo.Enabled), cfg.DpmConfigInfo.DefaultDpmBehavior)
	return result, nil
}

func validateAutomation(spec *types.ClusterConfigSpecEx) *labFault {
	if d := spec.DrsConfig; d != nil {
		if d.DefaultVmBehavior != "" && !lists.Contains(topology.DRSBehaviors, string(d.DefaultVmBehavior)) {
			return invalidArgument("spec.drsConfig.defaultVmBehavior", "%q is not one of %s", d.DefaultVmBehavior,
				strings.Join(topology.DRSBehaviors, ", "))
		}
		if d.VmotionRate < 0 || d.VmotionRate > 5 {
			return invalidArgument("spec.drsConfig.vmotionRate", "%d is not within 1..5", d.VmotionRate)
		}
	}
	if d := spec.DpmConfig; d != nil {
		if d.DefaultDpmBehavior != "" && !lists.Contains(topology.DPMBehaviors, string(d.DefaultDpmBehavior)) {
			return invalidArgument("spec.dpmConfig.defaultDpmBehavior", "%q is not one of %s", d.DefaultDpmBehavior,
				strings.Join(topology.DPMBehaviors, ", "))
		}
		if d.HostPowerActionRate < 0 || d.HostPowerActionRate > 5 {
			return invalidArgument("spec.dpmConfig.hostPowerActionRate", "%d is not within 1..5",
				d.HostPowerActionRate)
		}
	}
	return nil
}

func mergeDRS(current types.ClusterDrsConfigInfo, change *types.ClusterDrsConfigInfo) types.ClusterDrsConfigInfo {
	if change == nil {
		return current
	}
	if change.Enabled != nil {
		current.Enabled = types.NewBool(*change.Enabled)
	}
	if change.EnableVmBehaviorOverrides != nil {
		current.EnableVmBehaviorOverrides = types.NewBool(*change.EnableVmBehaviorOverrides)
	}
	if change.DefaultVmBehavior != "" {
		current.DefaultVmBehavior = change.DefaultVmBehavior
	}
	if change.VmotionRate != 0 {
		current.VmotionRate = change.VmotionRate
	}
	if change.ScaleDescendantsShares != "" {
		current.ScaleDescendantsShares = change.ScaleDescendantsShares
	}
	if change.Option != nil {
		current.Option = mergeOptions(current.Option, change.Option)
	}
	return current
}

func mergeDPM(current *types.ClusterDpmConfigInfo, change *types.ClusterDpmConfigInfo) *types.ClusterDpmConfigInfo {
	merged := types.ClusterDpmConfigInfo{}
	if current != nil {
		merged = *current
	}
	if change == nil {
		return &merged
	}
	if change.Enabled != nil {
		merged.Enabled = types.NewBool(*change.Enabled)
	}
	if change.DefaultDpmBehavior != "" {
		merged.DefaultDpmBehavior = change.DefaultDpmBehavior
	}
	if change.HostPowerActionRate != 0 {
		merged.HostPowerActionRate = change.HostPowerActionRate
	}
	if change.Option != nil {
		merged.Option = mergeOptions(merged.Option, change.Option)
	}
	return &merged
}

// mergeOptions sets advanced options by key; an option with an empty value is removed, as vCenter does.
func mergeOptions(current, change []types.BaseOptionValue) []types.BaseOptionValue {
	out := append([]types.BaseOptionValue(nil), current...)
	for _, c := range change {
		opt := c.GetOptionValue()
		kept := out[:0]
		for _, o := range out {
			if o.GetOptionValue().Key != opt.Key {
				kept = append(kept, o)
			}
		}
		out = kept
		if s, isString := opt.Value.(string); opt.Value != nil && !(isString && s == "") {
			out = append(out, c)
		}
	}
	return out
}
