// Package envbrowser is a compute resource's EnvironmentBrowser as vCenter answers it: the vGPU profiles and GPU
// models of the hosts in QueryConfigTarget, every guest OS descriptor filled in (QueryConfigOptionEx) and the
// hardware versions of ESXi 8.0 U2 (QueryConfigOptionDescriptor).
package envbrowser

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

// Lab is what the browser needs of the lab.
type Lab interface {
	// GPUHosts is the GPUs of each of the hosts the lab knows among refs, in the order of refs.
	GPUHosts(refs []types.ManagedObjectReference) []*gpu.Host
}

// Browser is a compute resource's EnvironmentBrowser that also reports the vGPU profiles its hosts offer.
type Browser struct {
	simulator.EnvironmentBrowser

	lab   Lab
	owner types.ManagedObjectReference // the cluster or standalone compute resource
}

// New is the browser that takes the place of the simulator's browser b of the compute resource owner.
func New(b *simulator.EnvironmentBrowser, lab Lab, owner types.ManagedObjectReference) *Browser {
	return &Browser{EnvironmentBrowser: *b, lab: lab, owner: owner}
}

func (b *Browser) hosts() []types.ManagedObjectReference {
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
func (b *Browser) QueryConfigTarget(ctx *simulator.Context, req *types.QueryConfigTarget) soap.HasFault {
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
	gpuHosts := b.lab.GPUHosts(hosts)
	for _, h := range gpuHosts {
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
		VgpuDeviceInfo:  gpu.VGPUDeviceInfo(gpuHosts),
		VgpuProfileInfo: gpu.VGPUProfileInfo(gpuHosts),
	}}}
}
