package clusters

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/topology"
)

// FillDefaults completes what the simulator leaves empty in a new cluster's configurationEx with what vCenter
// sets for a cluster created through the API with an empty spec: HA, DRS, DPM, vSAN, proactive DRS and Quick Boot
// (infraUpdateHa) all off, with their documented defaults (ClusterDasConfigInfo, ClusterDasVmSettings,
// ClusterVmToolsMonitoringSettings, ClusterDrsConfigInfo, ClusterDpmConfigInfo in the vSphere Web Services API
// reference). Clients read these without checking for unset parts (community.vmware's vmware_cluster_info reads
// vsanConfigInfo.enabled).
func FillDefaults(cfg *types.ClusterConfigInfoEx) {
	cfg.DasConfig = types.ClusterDasConfigInfo{
		Enabled:               types.NewBool(false),
		VmMonitoring:          string(types.ClusterDasConfigInfoVmMonitoringStateVmMonitoringDisabled),
		HostMonitoring:        string(types.ClusterDasConfigInfoServiceStateEnabled),
		VmComponentProtecting: string(types.ClusterDasConfigInfoServiceStateDisabled),
		FailoverLevel:         1,
		AdmissionControlPolicy: &types.ClusterFailoverResourcesAdmissionControlPolicy{
			CpuFailoverResourcesPercent:    50,
			MemoryFailoverResourcesPercent: 50,
			FailoverLevel:                  1,
			AutoComputePercentages:         types.NewBool(true),
		},
		AdmissionControlEnabled: types.NewBool(true),
		DefaultVmSettings: &types.ClusterDasVmSettings{
			RestartPriority:        string(types.ClusterDasVmSettingsRestartPriorityMedium),
			RestartPriorityTimeout: 600,
			IsolationResponse:      string(types.ClusterDasVmSettingsIsolationResponseNone),
			VmToolsMonitoringSettings: &types.ClusterVmToolsMonitoringSettings{
				Enabled:          types.NewBool(false),
				VmMonitoring:     string(types.ClusterDasConfigInfoVmMonitoringStateVmMonitoringDisabled),
				ClusterSettings:  types.NewBool(true),
				FailureInterval:  30,
				MinUpTime:        120,
				MaxFailures:      3,
				MaxFailureWindow: 3600,
			},
		},
		HBDatastoreCandidatePolicy: string(types.ClusterDasConfigInfoHBDatastoreCandidateAllFeasibleDsWithUserPreference),
	}
	cfg.DrsConfig = DRSConfig(&topology.AutomationSpec{Behavior: string(types.DrsBehaviorFullyAutomated)})
	cfg.DpmConfigInfo = DPMConfig(&topology.AutomationSpec{Behavior: string(types.DpmBehaviorManual)})
	cfg.VsanConfigInfo = &types.VsanClusterConfigInfo{
		Enabled:       types.NewBool(false),
		DefaultConfig: &types.VsanClusterConfigInfoHostDefaultInfo{AutoClaimStorage: types.NewBool(false)},
	}
	cfg.ProactiveDrsConfig = &types.ClusterProactiveDrsConfigInfo{Enabled: types.NewBool(false)}
	cfg.InfraUpdateHaConfig = &types.ClusterInfraUpdateHaConfigInfo{
		Enabled:             types.NewBool(false),
		Behavior:            string(types.ClusterInfraUpdateHaConfigInfoBehaviorTypeManual),
		ModerateRemediation: string(types.ClusterInfraUpdateHaConfigInfoRemediationTypeQuarantineMode),
		SevereRemediation:   string(types.ClusterInfraUpdateHaConfigInfoRemediationTypeQuarantineMode),
	}
	if cfg.VmSwapPlacement == "" {
		cfg.VmSwapPlacement = string(types.VirtualMachineConfigInfoSwapPlacementTypeVmDirectory)
	}
}

// applyCreateSpec applies the parts of CreateClusterEx's spec that the simulator ignores: HA, DRS, DPM and vSAN
// switched on or configured at creation, as vCenter does.
func applyCreateSpec(cfg *types.ClusterConfigInfoEx, spec *types.ClusterConfigSpecEx) {
	cfg.DasConfig = mergeDAS(cfg.DasConfig, spec.DasConfig)
	cfg.DrsConfig = mergeDRS(cfg.DrsConfig, spec.DrsConfig)
	cfg.DpmConfigInfo = mergeDPM(cfg.DpmConfigInfo, spec.DpmConfig)
	if spec.VsanConfig != nil && spec.VsanConfig.Enabled != nil {
		cfg.VsanConfigInfo.Enabled = types.NewBool(*spec.VsanConfig.Enabled)
	}
}

// Created is called for every cluster the simulator registers; a cluster created through the API gets vCenter's
// defaults and its creation spec.
func (c *Clusters) Created(cluster *simulator.ClusterComputeResource) {
	cfg, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if !ok || cfg.VsanConfigInfo != nil {
		return
	}
	FillDefaults(cfg)
	if req, ok := c.lab.Inflight().(*types.CreateClusterEx); ok && req.Name == cluster.Name {
		applyCreateSpec(cfg, &req.Spec)
	}
	SyncLegacyConfiguration(cluster)
}

// SyncLegacyConfiguration keeps a cluster's configuration (ClusterConfigInfo, deprecated since vSphere 2.5 but still
// served and read by clients such as community.vmware's DRS rule modules) in step with configurationEx: the same HA
// and DRS settings, per-VM overrides and rules.
func SyncLegacyConfiguration(cluster *simulator.ClusterComputeResource) {
	cfg, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if !ok {
		return
	}
	cluster.Configuration = types.ClusterConfigInfo{DasConfig: cfg.DasConfig, DasVmConfig: cfg.DasVmConfig,
		DrsConfig: cfg.DrsConfig, DrsVmConfig: cfg.DrsVmConfig, Rule: cfg.Rule}
}

// mergeDAS applies the HA (vSphere HA, "das") part of a cluster spec: the properties the spec sets replace the
// current ones and the others stay, as ReconfigureComputeResource_Task does for a ClusterDasConfigInfo (vSphere
// Web Services API, ClusterConfigSpecEx.dasConfig; an unset property means no change).
func mergeDAS(cur types.ClusterDasConfigInfo, spec *types.ClusterDasConfigInfo) types.ClusterDasConfigInfo {
	if spec == nil {
		return cur
	}
	for _, f := range []struct{ to, from **bool }{{&cur.Enabled, &spec.Enabled},
		{&cur.AdmissionControlEnabled, &spec.AdmissionControlEnabled}} {
		if *f.from != nil {
			*f.to = types.NewBool(**f.from)
		}
	}
	for _, f := range []struct{ to, from *string }{{&cur.VmMonitoring, &spec.VmMonitoring},
		{&cur.HostMonitoring, &spec.HostMonitoring}, {&cur.VmComponentProtecting, &spec.VmComponentProtecting},
		{&cur.HBDatastoreCandidatePolicy, &spec.HBDatastoreCandidatePolicy}} {
		if *f.from != "" {
			*f.to = *f.from
		}
	}
	if spec.FailoverLevel != 0 {
		cur.FailoverLevel = spec.FailoverLevel
	}
	if spec.AdmissionControlPolicy != nil {
		cur.AdmissionControlPolicy = spec.AdmissionControlPolicy
	}
	if spec.DefaultVmSettings != nil {
		cur.DefaultVmSettings = spec.DefaultVmSettings
	}
	if spec.HeartbeatDatastore != nil {
		cur.HeartbeatDatastore = spec.HeartbeatDatastore
	}
	for _, change := range spec.Option {
		opt := change.GetOptionValue()
		replaced := false
		for i, have := range cur.Option {
			if have.GetOptionValue().Key == opt.Key {
				cur.Option[i], replaced = change, true
			}
		}
		if !replaced {
			cur.Option = append(cur.Option, change)
		}
	}
	return cur
}
