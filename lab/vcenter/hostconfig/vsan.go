package hostconfig

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
)

// VsanSystem is a host's HostVsanSystem (configManager.vsanSystem). Every ESXi host has one, vSAN enabled or not;
// the lab's hosts run without vSAN.
type VsanSystem struct {
	mo.HostVsanSystem
}

func NewVsanSystem(host *simulator.HostSystem) *VsanSystem {
	s := &VsanSystem{}
	s.Self = types.ManagedObjectReference{Type: "HostVsanSystem", Value: "vsanSystem-" + simobj.Number(host.Self)}
	ref := host.Self
	s.Config = types.VsanHostConfigInfo{
		Enabled:         types.NewBool(false),
		HostSystem:      &ref,
		ClusterInfo:     &types.VsanHostConfigInfoClusterInfo{},
		StorageInfo:     &types.VsanHostConfigInfoStorageInfo{AutoClaimStorage: types.NewBool(false)},
		NetworkInfo:     &types.VsanHostConfigInfoNetworkInfo{},
		FaultDomainInfo: &types.VsanHostFaultDomainInfo{},
	}
	return s
}

// QueryHostStatus answers what a host outside any vSAN cluster reports: no cluster or node UUID, health "unknown"
// and node state "disabled" (VsanHostClusterStatus, VsanHostHealthState, VsanHostNodeState in the vSphere Web
// Services API reference).
func (s *VsanSystem) QueryHostStatus(req *types.QueryHostStatus) soap.HasFault {
	return &methods.QueryHostStatusBody{Res: &types.QueryHostStatusResponse{Returnval: types.VsanHostClusterStatus{
		Health:    "unknown",
		NodeState: types.VsanHostClusterStatusState{State: "disabled"},
	}}}
}
