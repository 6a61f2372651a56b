package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/vgputypes"
	"vcsim/vimfault"
)

// envBrowser is a compute resource's EnvironmentBrowser that also reports the vGPU profiles its hosts offer.
type envBrowser struct {
	simulator.EnvironmentBrowser

	lab   *Lab
	owner types.ManagedObjectReference // the cluster or standalone compute resource
}

func (b *envBrowser) hosts() []types.ManagedObjectReference {
	switch cr := simulator.Map.Get(b.owner).(type) {
	case *simulator.ClusterComputeResource:
		return cr.Host
	case *mo.ComputeResource:
		return cr.Host
	}
	return nil
}

// QueryConfigTarget adds sharedGpuPassthroughTypes, vgpuProfileInfo and vgpuDeviceInfo: the profiles and GPU models
// of the given host, or the union over the compute resource's hosts.
func (b *envBrowser) QueryConfigTarget(ctx *simulator.Context, req *types.QueryConfigTarget) soap.HasFault {
	hosts := b.hosts()
	if req.Host != nil {
		if simulator.FindReference(hosts, *req.Host) == nil {
			f := vimfault.InvalidArgument("host", "%s is not a host of %s", req.Host.Value, b.owner.Value)
			return &methods.QueryConfigTargetBody{Fault_: f.SOAP()}
		}
		hosts = []types.ManagedObjectReference{*req.Host}
	}
	body := b.EnvironmentBrowser.QueryConfigTarget(ctx, req).(*methods.QueryConfigTargetBody)
	if body.Res == nil {
		return body
	}
	seen := map[string]bool{}
	var states []*hostState
	for _, ref := range hosts {
		h := b.lab.host(ref)
		if h == nil {
			continue
		}
		states = append(states, h)
		for _, p := range h.Profiles {
			if seen[p] {
				continue
			}
			seen[p] = true
			body.Res.Returnval.SharedGpuPassthroughTypes = append(body.Res.Returnval.SharedGpuPassthroughTypes,
				types.VirtualMachinePciSharedGpuPassthroughInfo{
					VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p},
					Vgpu:                     p,
				})
		}
	}
	return &vgputypes.QueryConfigTargetBody{Res: &vgputypes.QueryConfigTargetResponse{Returnval: &vgputypes.ConfigTarget{
		ConfigTarget:    *body.Res.Returnval,
		VgpuDeviceInfo:  gpu.VGPUDeviceInfo(gpuHosts(states)),
		VgpuProfileInfo: gpu.VGPUProfileInfo(gpuHosts(states)),
	}}}
}
