// Package propcollector is the lab's PropertyCollector: the simulator's with vCenter's answer to Fetch (an unset
// property reads as unset, the properties of vSphere 8.0.2 the simulator's types predate) and with the lab's vGPU
// types in the graphics properties of hosts and their graphics managers (RetrievePropertiesEx, RetrieveProperties).
// It needs nothing of the lab: Install puts it in place of the simulator's.
package propcollector

import (
	"reflect"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// propertyCollector is the simulator's PropertyCollector with vCenter's answer to Fetch, the call pyVmomi (8 and
// later) makes for every attribute read of a managed object (vm.snapshot, host.config, ...).
//
// A property that is unset comes back from RetrievePropertiesEx neither in propSet nor in missingSet (missingSet is
// only for properties that could not be read). vCenter's Fetch then answers an empty FetchResponse, which pyVmomi
// reads as None; the simulator's own Fetch indexes missingSet[0] there and panics.
type propertyCollector struct {
	simulator.PropertyCollector
}

// fetchBody and FetchResponse have the wire shape of Fetch's response (the simulator names the response element
// after the Go type, so FetchResponse keeps its name); the simulator's own types are internal.
type fetchBody struct {
	Res    *FetchResponse `xml:"urn:vim25 FetchResponse,omitempty"`
	Fault_ *soap.Fault    `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

type FetchResponse struct {
	Returnval types.AnyType `xml:"returnval,omitempty,typeattr"`
}

func (b *fetchBody) Fault() *soap.Fault { return b.Fault_ }

// Install puts the lab's property collector in place of the simulator's, in a model already created. Sessions clone
// the registered object's type, so every session's collector is the lab's.
func Install() {
	content := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	pc := &propertyCollector{}
	pc.Self = content.PropertyCollector
	simulator.Map.Put(pc)
}

// Fetch takes the request as interface{}: its type is internal to the simulator (fields This and Prop).
func (pc *propertyCollector) Fetch(ctx *simulator.Context, req interface{}) soap.HasFault {
	fields := reflect.ValueOf(req).Elem()
	this := fields.FieldByName("This").Interface().(types.ManagedObjectReference)
	prop := fields.FieldByName("Prop").Interface().(string)
	if this == vim25.ServiceInstance || ctx.Map.Get(this) == nil {
		// ServiceInstance.content and references by a supertype (ManagedEntity) are the simulator's special cases.
		original := reflect.ValueOf(&pc.PropertyCollector).MethodByName("Fetch")
		return original.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req)})[0].Interface().(soap.HasFault)
	}
	if value, ok := newerProperty(ctx.Map.Get(this), prop); ok {
		return &fetchBody{Res: &FetchResponse{Returnval: value}}
	}
	res := pc.RetrievePropertiesEx(ctx, &types.RetrievePropertiesEx{SpecSet: []types.PropertyFilterSpec{{
		PropSet:   []types.PropertySpec{{Type: this.Type, PathSet: []string{prop}}},
		ObjectSet: []types.ObjectSpec{{Obj: this}},
	}}})
	if res.Fault() != nil {
		return res
	}
	body := &fetchBody{Res: &FetchResponse{}}
	result := res.(*methods.RetrievePropertiesExBody).Res.Returnval
	if result == nil || len(result.Objects) == 0 {
		body.Res = nil
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: this})
		return body
	}
	obj := result.Objects[0]
	switch {
	case len(obj.PropSet) > 0:
		body.Res.Returnval = obj.PropSet[0].Val
	case len(obj.MissingSet) > 0:
		body.Res = nil
		body.Fault_ = simulator.Fault(obj.MissingSet[0].Fault.LocalizedMessage, obj.MissingSet[0].Fault.Fault)
	}
	return body
}

// newerProperty answers the properties of vSphere 8.0.2 (the API version the lab presents) that the simulator's
// types predate: ComputeResource.configManagerEnabled (8.0.0.0; false, the lab's clusters are not managed with
// vSphere Configuration Profiles) and ClusterComputeResource.summaryEx (7.0.1.1; the cluster's summary).
func newerProperty(obj mo.Reference, prop string) (types.AnyType, bool) {
	switch prop {
	case "configManagerEnabled":
		switch obj.(type) {
		case *simulator.ClusterComputeResource, *mo.ComputeResource:
			return false, true
		}
	case "summaryEx":
		if cluster, ok := obj.(*simulator.ClusterComputeResource); ok {
			return cluster.Summary, true
		}
	}
	return nil, false
}
