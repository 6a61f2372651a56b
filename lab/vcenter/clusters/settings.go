// Package clusters holds a cluster's settings as vCenter keeps them, over the simulator's objects: DRS, DPM and HA
// through ReconfigureComputeResource_Task and its older form ReconfigureCluster_Task (with modify semantics, checked
// before any change), vCenter's defaults for a cluster created through the API and its creation spec, the older
// configuration kept in step with configurationEx, Destroy_Task of an empty cluster, and GetResourceUsage (use and
// capacity summed over the connected hosts and their datastores). What it needs of the lab is its Lab interface: the
// request being served (the task hooks' arguments), failing a task with vCenter's message, property updates, and
// forgetting a destroyed cluster.
package clusters

import (
	"net/http"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/soaphttp"
	"vcsim/topology"
	"vcsim/vimfault"
)

// Lab is what the clusters need of the lab.
type Lab interface {
	// Inflight is the decoded request being served, which the task hooks read their arguments from.
	Inflight() interface{}
	// SetInflight replaces it (ReconfigureCluster_Task runs as ReconfigureComputeResource_Task).
	SetInflight(req interface{})
	// TaskFailed ends a task with a fault and the message vCenter words it with.
	TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault)
	// Update changes properties of a simulator object so that property collector waiters see the change.
	Update(obj mo.Reference, changes ...types.PropertyChange)
	// ClusterDestroyed tells the lab a cluster is gone.
	ClusterDestroyed(ref types.ManagedObjectReference)
	Logf(format string, args ...interface{})
}

// RequestsRead are the requests whose arguments the package reads through Lab.Inflight while it serves them.
var RequestsRead = []string{"ReconfigureComputeResource_Task", "CreateClusterEx"}

// TaskRunner runs a task of the simulator: its own work, which a hook runs, replaces or surrounds.
type TaskRunner = func(*simulator.Task) (types.AnyType, types.BaseMethodFault)

// Clusters serves the lab's cluster settings.
type Clusters struct{ lab Lab }

func New(lab Lab) *Clusters { return &Clusters{lab: lab} }

// Serve answers the cluster methods the lab implements itself (GetResourceUsage, ReconfigureCluster_Task,
// Destroy_Task of a cluster), and says whether it did.
func (c *Clusters) Serve(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	return serveResourceUsage(w, call) || c.serveClusterDestroy(w, call) || c.serveReconfigureCluster(w, call, body)
}

const defaultMigrationRate = 3

// DRSConfig is what a cluster's configurationEx.drsConfig holds for a topology's "drs" entry.
func DRSConfig(spec *topology.AutomationSpec) types.ClusterDrsConfigInfo {
	return types.ClusterDrsConfigInfo{
		Enabled:                   types.NewBool(spec.Enabled),
		EnableVmBehaviorOverrides: types.NewBool(true),
		DefaultVmBehavior:         types.DrsBehavior(spec.Behavior),
		VmotionRate:               defaultMigrationRate,
	}
}

func DPMConfig(spec *topology.AutomationSpec) *types.ClusterDpmConfigInfo {
	return &types.ClusterDpmConfigInfo{
		Enabled:             types.NewBool(spec.Enabled),
		DefaultDpmBehavior:  types.DpmBehavior(spec.Behavior),
		HostPowerActionRate: defaultMigrationRate,
	}
}

// Reconfigure, the task hook of ClusterComputeResource.reconfigureCluster, adds DRS and DPM to the simulator's ReconfigureComputeResource_Task, which ignores both:
// with modify=true only the fields the spec sets change; with modify=false the spec replaces the configuration and
// unset fields take vCenter's defaults. The simulator's part (rules, groups, overrides) runs after; if it fails,
// DRS and DPM are restored.
func (c *Clusters) Reconfigure(t *simulator.Task, original TaskRunner) (types.AnyType, types.BaseMethodFault) {
	req, ok := c.lab.Inflight().(*types.ReconfigureComputeResource_Task)
	if !ok || req.This != *t.Info.Entity {
		return original(t)
	}
	spec, isEx := req.Spec.(*types.ClusterConfigSpecEx)
	cluster, isCluster := simulator.Map.Get(req.This).(*simulator.ClusterComputeResource)
	if !isEx || !isCluster {
		return original(t)
	}
	if f := validateAutomation(spec); f != nil {
		return c.lab.TaskFailed(t, f)
	}
	cfg := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	drs, dpm, das := cfg.DrsConfig, cfg.DpmConfigInfo, cfg.DasConfig
	cfg.DasConfig = mergeDAS(cfg.DasConfig, spec.DasConfig)
	if req.Modify {
		cfg.DrsConfig = mergeDRS(cfg.DrsConfig, spec.DrsConfig)
		cfg.DpmConfigInfo = mergeDPM(cfg.DpmConfigInfo, spec.DpmConfig)
	} else {
		cfg.DrsConfig = mergeDRS(DRSConfig(&topology.AutomationSpec{Behavior: string(types.DrsBehaviorFullyAutomated)}),
			spec.DrsConfig)
		cfg.DpmConfigInfo = mergeDPM(DPMConfig(&topology.AutomationSpec{Behavior: string(types.DpmBehaviorManual)}),
			spec.DpmConfig)
	}
	result, fault := original(t)
	if fault != nil {
		cfg.DrsConfig, cfg.DpmConfigInfo, cfg.DasConfig = drs, dpm, das
		return result, fault
	}
	SyncLegacyConfiguration(cluster)
	c.lab.Update(cluster, types.PropertyChange{Name: "configurationEx", Val: cfg},
		types.PropertyChange{Name: "configuration", Val: cluster.Configuration})
	c.lab.Logf("cluster %s: DRS enabled=%v %s, DPM enabled=%v %s", cluster.Name, isTrue(cfg.DrsConfig.Enabled),
		cfg.DrsConfig.DefaultVmBehavior, isTrue(cfg.DpmConfigInfo.Enabled), cfg.DpmConfigInfo.DefaultDpmBehavior)
	return result, nil
}

func validateAutomation(spec *types.ClusterConfigSpecEx) *vimfault.Fault {
	if d := spec.DrsConfig; d != nil {
		if d.DefaultVmBehavior != "" && !lists.Contains(topology.DRSBehaviors, string(d.DefaultVmBehavior)) {
			return vimfault.InvalidArgument("spec.drsConfig.defaultVmBehavior", "%q is not one of %s", d.DefaultVmBehavior,
				strings.Join(topology.DRSBehaviors, ", "))
		}
		if d.VmotionRate < 0 || d.VmotionRate > 5 {
			return vimfault.InvalidArgument("spec.drsConfig.vmotionRate", "%d is not within 1..5", d.VmotionRate)
		}
	}
	if d := spec.DpmConfig; d != nil {
		if d.DefaultDpmBehavior != "" && !lists.Contains(topology.DPMBehaviors, string(d.DefaultDpmBehavior)) {
			return vimfault.InvalidArgument("spec.dpmConfig.defaultDpmBehavior", "%q is not one of %s", d.DefaultDpmBehavior,
				strings.Join(topology.DPMBehaviors, ", "))
		}
		if d.HostPowerActionRate < 0 || d.HostPowerActionRate > 5 {
			return vimfault.InvalidArgument("spec.dpmConfig.hostPowerActionRate", "%d is not within 1..5",
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

func isTrue(b *bool) bool { return b != nil && *b }
