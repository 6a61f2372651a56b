// Package vgputypes holds the vGPU API of vSphere 7.0.3 and 8.0.3 that govmomi 0.24's types predate, under the WSDL
// names pyVmomi knows: HostGraphicsInfo.vgpuMode and HostGraphicsConfigDeviceType.vgpuMode (8.0.3.0),
// VirtualMachineVgpuProfileInfo, VirtualMachineVgpuDeviceInfo, ConfigTarget.vgpuProfileInfo/vgpuDeviceInfo and
// HostGraphicsManager.RetrieveVgpuProfileInfo/RetrieveVgpuDeviceInfo (7.0.3.0). The simulator marshals a value under
// its Go type's name, so these types carry the WSDL names; the managed objects keep govmomi's types, and the lab's
// property collector (package propcollector) answers with these in their place.
package vgputypes

import (
	"reflect"

	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// A GPU's vgpuMode (HostGraphicsInfo, HostGraphicsConfigDeviceType).
const (
	ModeNone      = "none"
	ModeSameSize  = "sameSize"
	ModeMixedSize = "mixedSize"
)

// ConfigurableModes are the modes UpdateGraphicsConfig sets.
var ConfigurableModes = []string{ModeSameSize, ModeMixedSize}

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

// RetrieveVgpuProfileInfoBody is the SOAP body of its response.
type RetrieveVgpuProfileInfoBody struct {
	Res    *RetrieveVgpuProfileInfoResponse `xml:"urn:vim25 RetrieveVgpuProfileInfoResponse,omitempty"`
	Fault_ *soap.Fault                      `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *RetrieveVgpuProfileInfoBody) Fault() *soap.Fault { return b.Fault_ }

// RetrieveVgpuDeviceInfoBody is the SOAP body of its response.
type RetrieveVgpuDeviceInfoBody struct {
	Res    *RetrieveVgpuDeviceInfoResponse `xml:"urn:vim25 RetrieveVgpuDeviceInfoResponse,omitempty"`
	Fault_ *soap.Fault                     `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *RetrieveVgpuDeviceInfoBody) Fault() *soap.Fault { return b.Fault_ }

// ConfigTarget is EnvironmentBrowser.QueryConfigTarget's answer with the vGPU lists of API 7.0.3.
type ConfigTarget struct {
	types.ConfigTarget

	VgpuDeviceInfo  []VirtualMachineVgpuDeviceInfo  `xml:"vgpuDeviceInfo,omitempty"`
	VgpuProfileInfo []VirtualMachineVgpuProfileInfo `xml:"vgpuProfileInfo,omitempty"`
}

type QueryConfigTargetResponse struct {
	Returnval *ConfigTarget `xml:"returnval,omitempty"`
}

// QueryConfigTargetBody is the SOAP body of its response.
type QueryConfigTargetBody struct {
	Res    *QueryConfigTargetResponse `xml:"urn:vim25 QueryConfigTargetResponse,omitempty"`
	Fault_ *soap.Fault                `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *QueryConfigTargetBody) Fault() *soap.Fault { return b.Fault_ }

// Requests decode into the lab's types. Response types stay unregistered: Go clients in the tests keep decoding
// property values into govmomi's types.
func init() {
	for _, t := range []interface{}{UpdateGraphicsConfig{}, RetrieveVgpuProfileInfo{}, RetrieveVgpuDeviceInfo{},
		HostGraphicsConfigDeviceType{}} {
		typ := reflect.TypeOf(t)
		types.Add(typ.Name(), typ)
	}
}
