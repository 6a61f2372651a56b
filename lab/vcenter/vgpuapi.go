package main

import (
	"reflect"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
)

// The vGPU API of vSphere 7.0.3 and 8.0.3 that govmomi 0.24's types predate, under the WSDL names pyVmomi knows:
// HostGraphicsInfo.vgpuMode and HostGraphicsConfigDeviceType.vgpuMode (8.0.3.0), VirtualMachineVgpuProfileInfo,
// VirtualMachineVgpuDeviceInfo, ConfigTarget.vgpuProfileInfo/vgpuDeviceInfo and
// HostGraphicsManager.RetrieveVgpuProfileInfo/RetrieveVgpuDeviceInfo (7.0.3.0). The simulator marshals a value under
// its Go type's name, so these types carry the WSDL names; the managed objects keep govmomi's types, and the property
// collector answers with these in their place (extendProperty).

const (
	vgpuModeNone      = "none"
	vgpuModeSameSize  = "sameSize"
	vgpuModeMixedSize = "mixedSize"
)

var configurableVgpuModes = []string{vgpuModeSameSize, vgpuModeMixedSize}

type HostGraphicsInfo struct {
	types.DynamicData

	DeviceName     string                         `xml:"deviceName"`
	VendorName     string                         `xml:"vendorName"`
	PciId          string                         `xml:"pciId"`
	GraphicsType   string                         `xml:"graphicsType"`
	VgpuMode       string                         `xml:"vgpuMode,omitempty"`
	MemorySizeInKB int64                          `xml:"memorySizeInKB"`
	Vm             []types.ManagedObjectReference `xml:"vm,omitempty"`
}

type ArrayOfHostGraphicsInfo struct {
	HostGraphicsInfo []HostGraphicsInfo `xml:"HostGraphicsInfo,omitempty"`
}

type HostGraphicsConfigDeviceType struct {
	types.DynamicData

	DeviceId     string `xml:"deviceId"`
	GraphicsType string `xml:"graphicsType"`
	VgpuMode     string `xml:"vgpuMode,omitempty"`
}

type HostGraphicsConfig struct {
	types.DynamicData

	HostDefaultGraphicsType        string                         `xml:"hostDefaultGraphicsType"`
	SharedPassthruAssignmentPolicy string                         `xml:"sharedPassthruAssignmentPolicy"`
	DeviceType                     []HostGraphicsConfigDeviceType `xml:"deviceType,omitempty"`
}

// HostConfigInfo is HostSystem.config with the graphics fields above in place of govmomi's (the outer fields win).
type HostConfigInfo struct {
	types.HostConfigInfo

	GraphicsInfo   []HostGraphicsInfo  `xml:"graphicsInfo,omitempty"`
	GraphicsConfig *HostGraphicsConfig `xml:"graphicsConfig,omitempty"`
}

type UpdateGraphicsConfig struct {
	This   types.ManagedObjectReference `xml:"_this"`
	Config HostGraphicsConfig           `xml:"config"`
}

type VirtualMachineVgpuProfileInfo struct {
	types.VirtualMachineTargetInfo

	ProfileName    string `xml:"profileName"`
	DeviceVendorId int64  `xml:"deviceVendorId"`
	FbSizeInGib    int64  `xml:"fbSizeInGib"`
	ProfileSharing string `xml:"profileSharing"`
	ProfileClass   string `xml:"profileClass"`
}

type VirtualMachineVgpuDeviceInfo struct {
	types.VirtualMachineTargetInfo

	DeviceName            string `xml:"deviceName"`
	DeviceVendorId        int64  `xml:"deviceVendorId"`
	MaxFbSizeInGib        int64  `xml:"maxFbSizeInGib"`
	TimeSlicedCapable     bool   `xml:"timeSlicedCapable"`
	MigCapable            bool   `xml:"migCapable"`
	ComputeProfileCapable bool   `xml:"computeProfileCapable"`
	QuadroProfileCapable  bool   `xml:"quadroProfileCapable"`
}

type RetrieveVgpuProfileInfo struct {
	This types.ManagedObjectReference `xml:"_this"`
}

type RetrieveVgpuDeviceInfo struct {
	This types.ManagedObjectReference `xml:"_this"`
}

type RetrieveVgpuProfileInfoResponse struct {
	Returnval []VirtualMachineVgpuProfileInfo `xml:"returnval,omitempty"`
}

type RetrieveVgpuDeviceInfoResponse struct {
	Returnval []VirtualMachineVgpuDeviceInfo `xml:"returnval,omitempty"`
}

type retrieveVgpuProfileInfoBody struct {
	Res    *RetrieveVgpuProfileInfoResponse `xml:"urn:vim25 RetrieveVgpuProfileInfoResponse,omitempty"`
	Fault_ *soap.Fault                      `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *retrieveVgpuProfileInfoBody) Fault() *soap.Fault { return b.Fault_ }

type retrieveVgpuDeviceInfoBody struct {
	Res    *RetrieveVgpuDeviceInfoResponse `xml:"urn:vim25 RetrieveVgpuDeviceInfoResponse,omitempty"`
	Fault_ *soap.Fault                     `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *retrieveVgpuDeviceInfoBody) Fault() *soap.Fault { return b.Fault_ }

// ConfigTarget is EnvironmentBrowser.QueryConfigTarget's answer with the vGPU lists of API 7.0.3.
type ConfigTarget struct {
	types.ConfigTarget

	VgpuDeviceInfo  []VirtualMachineVgpuDeviceInfo  `xml:"vgpuDeviceInfo,omitempty"`
	VgpuProfileInfo []VirtualMachineVgpuProfileInfo `xml:"vgpuProfileInfo,omitempty"`
}

type QueryConfigTargetResponse struct {
	Returnval *ConfigTarget `xml:"returnval,omitempty"`
}

type queryConfigTargetBody struct {
	Res    *QueryConfigTargetResponse `xml:"urn:vim25 QueryConfigTargetResponse,omitempty"`
	Fault_ *soap.Fault                `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *queryConfigTargetBody) Fault() *soap.Fault { return b.Fault_ }

// Requests decode into the lab's types. Response types stay unregistered: Go clients in the tests keep decoding
// property values into govmomi's types.
func init() {
	for _, t := range []interface{}{UpdateGraphicsConfig{}, RetrieveVgpuProfileInfo{}, RetrieveVgpuDeviceInfo{},
		HostGraphicsConfigDeviceType{}} {
		typ := reflect.TypeOf(t)
		types.Add(typ.Name(), typ)
	}
}

func gib(frameBufferMiB int64) int64 { return frameBufferMiB / 1024 }

func profileInfo(p *catalog.Profile) VirtualMachineVgpuProfileInfo {
	return VirtualMachineVgpuProfileInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
		ProfileName:              p.Name,
		DeviceVendorId:           nvidiaVendorID,
		FbSizeInGib:              gib(p.FramebufferMiB),
		ProfileSharing:           p.Sharing,
		ProfileClass:             p.ProfileClass,
	}
}

func deviceInfo(m *catalog.GPUModel) VirtualMachineVgpuDeviceInfo {
	d := VirtualMachineVgpuDeviceInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: m.DeviceName},
		DeviceName:               m.DeviceName,
		DeviceVendorId:           nvidiaVendorID,
		MaxFbSizeInGib:           gib(m.FramebufferMiB),
		MigCapable:               m.MIGCapable,
	}
	for _, p := range m.Profiles {
		d.TimeSlicedCapable = d.TimeSlicedCapable || p.Sharing == "timeSliced"
		d.ComputeProfileCapable = d.ComputeProfileCapable || p.ProfileClass == "compute"
		d.QuadroProfileCapable = d.QuadroProfileCapable || p.ProfileClass == "quadro"
	}
	return d
}

// vgpuProfileInfo lists the profiles the hosts' GPUs offer, each once, in catalog order.
func vgpuProfileInfo(hosts []*hostState) []VirtualMachineVgpuProfileInfo {
	var list []VirtualMachineVgpuProfileInfo
	seen := map[string]bool{}
	for _, h := range hosts {
		for _, name := range h.profiles {
			if p := h.lab.catalog.Profile(name); p != nil && !seen[name] {
				seen[name] = true
				list = append(list, profileInfo(p))
			}
		}
	}
	return list
}

// vgpuDeviceInfo lists the hosts' GPU models, each once.
func vgpuDeviceInfo(hosts []*hostState) []VirtualMachineVgpuDeviceInfo {
	var list []VirtualMachineVgpuDeviceInfo
	seen := map[*catalog.GPUModel]bool{}
	for _, h := range hosts {
		for _, g := range h.gpus {
			if !seen[g.model] {
				seen[g.model] = true
				list = append(list, deviceInfo(g.model))
			}
		}
	}
	return list
}

func (m *graphicsManager) RetrieveVgpuProfileInfo(req *RetrieveVgpuProfileInfo) soap.HasFault {
	return &retrieveVgpuProfileInfoBody{Res: &RetrieveVgpuProfileInfoResponse{
		Returnval: vgpuProfileInfo([]*hostState{m.host})}}
}

func (m *graphicsManager) RetrieveVgpuDeviceInfo(req *RetrieveVgpuDeviceInfo) soap.HasFault {
	return &retrieveVgpuDeviceInfoBody{Res: &RetrieveVgpuDeviceInfoResponse{
		Returnval: vgpuDeviceInfo([]*hostState{m.host})}}
}

// graphicsInfoEx is HostGraphicsInfo with each GPU's vGPU mode in effect.
func (h *hostState) graphicsInfoEx() []HostGraphicsInfo {
	info := make([]HostGraphicsInfo, len(h.gpus))
	for i, g := range h.gpus {
		info[i] = HostGraphicsInfo{
			DeviceName:     g.model.DeviceName,
			VendorName:     nvidiaVendorName,
			PciId:          g.pciID,
			GraphicsType:   g.active,
			VgpuMode:       g.vgpuMode(),
			MemorySizeInKB: g.model.FramebufferMiB * 1024,
			Vm:             g.vms(),
		}
	}
	return info
}

func (h *hostState) graphicsConfigEx() *HostGraphicsConfig {
	c := h.config
	c.DeviceType = append([]HostGraphicsConfigDeviceType(nil), h.config.DeviceType...)
	return &c
}

// extendProperty puts the lab's graphics types in place of govmomi's in a property value of a host or of its
// graphics manager, so that clients read vgpuMode.
func extendProperty(ctx *simulator.Context, obj types.ManagedObjectReference, val types.AnyType) types.AnyType {
	h := graphicsHost(ctx, obj)
	if h == nil {
		return val
	}
	switch v := val.(type) {
	case types.ArrayOfHostGraphicsInfo, *types.ArrayOfHostGraphicsInfo:
		return &ArrayOfHostGraphicsInfo{HostGraphicsInfo: h.graphicsInfoEx()}
	case types.HostGraphicsConfig, *types.HostGraphicsConfig:
		return *h.graphicsConfigEx()
	case types.HostConfigInfo:
		return HostConfigInfo{HostConfigInfo: v, GraphicsInfo: h.graphicsInfoEx(), GraphicsConfig: h.graphicsConfigEx()}
	case *types.HostConfigInfo:
		return HostConfigInfo{HostConfigInfo: *v, GraphicsInfo: h.graphicsInfoEx(), GraphicsConfig: h.graphicsConfigEx()}
	}
	return val
}

// graphicsHost is the lab host of a HostSystem or HostGraphicsManager, or nil.
func graphicsHost(ctx *simulator.Context, ref types.ManagedObjectReference) *hostState {
	switch obj := ctx.Map.Get(ref).(type) {
	case *graphicsManager:
		return obj.host
	case *simulator.HostSystem:
		if obj.ConfigManager.GraphicsManager != nil {
			if m, ok := ctx.Map.Get(*obj.ConfigManager.GraphicsManager).(*graphicsManager); ok {
				return m.host
			}
		}
	}
	return nil
}

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

func extendObjects(ctx *simulator.Context, objects []types.ObjectContent) {
	for i := range objects {
		o := &objects[i]
		if o.Obj.Type != "HostSystem" && o.Obj.Type != "HostGraphicsManager" {
			continue
		}
		for j := range o.PropSet {
			o.PropSet[j].Val = extendProperty(ctx, o.Obj, o.PropSet[j].Val)
		}
	}
}
