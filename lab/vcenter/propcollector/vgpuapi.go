package propcollector

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
)

// RetrievePropertiesEx answers graphics properties with the lab's types (Fetch comes here as well).
func (pc *propertyCollector) RetrievePropertiesEx(ctx *simulator.Context, req *types.RetrievePropertiesEx) soap.HasFault {
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, req)
	if body, ok := res.(*methods.RetrievePropertiesExBody); ok && body.Res != nil && body.Res.Returnval != nil {
		extendObjects(ctx, body.Res.Returnval.Objects)
	}
	return res
}

func (pc *propertyCollector) RetrieveProperties(ctx *simulator.Context, req *types.RetrieveProperties) soap.HasFault {
	res := pc.PropertyCollector.RetrieveProperties(ctx, req)
	if body, ok := res.(*methods.RetrievePropertiesBody); ok && body.Res != nil {
		extendObjects(ctx, body.Res.Returnval)
	}
	return res
}

// extendObjects puts the lab's graphics types (with vgpuMode) in the property values of hosts and graphics managers.
func extendObjects(ctx *simulator.Context, objects []types.ObjectContent) {
	for i := range objects {
		o := &objects[i]
		if o.Obj.Type != "HostSystem" && o.Obj.Type != "HostGraphicsManager" {
			continue
		}
		for j := range o.PropSet {
			o.PropSet[j].Val = gpu.ExtendProperty(ctx, o.Obj, o.PropSet[j].Val)
		}
	}
}
