package dvs

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// dvsManager is vCenter's DistributedVirtualSwitchManager (serviceContent.dvSwitchManager, id DVSManager), which
// the simulator names in its service content but does not serve (vSphere Web Services API,
// DistributedVirtualSwitchManager; developer.broadcom.com/xapis/vsphere-web-services-api/latest/
// vim.dvs.DistributedVirtualSwitchManager.html):
//   - QueryAvailableDvsSpec lists the switch versions vCenter supports, newest first; recommended true lists only
//     the recommended ones, false only the others, unset all (QueryAvailableDvsSpecRequestType, developer.broadcom.com/
//     xapis/virtual-infrastructure-json-api/latest/data-structures/QueryAvailableDvsSpecRequestType);
//   - QueryDvsByUuid finds a distributed switch by its uuid, NotFound when none has it.
//
// The versions are those vCenter 8.0 Update 3 offers for a new switch (8.0.3 down to 6.6.0, as its New Distributed
// Switch wizard lists them), all taken as recommended: vCenter 8.0 keeps no older switch versions, so none is listed as
// not recommended. Not confirmed against a real vCenter's answer; builds are left unset.
type dvsManager struct {
	mo.DistributedVirtualSwitchManager
}

var dvsVersions = []string{"8.0.3", "8.0.0", "7.0.3", "7.0.2", "7.0.0", "6.6.0"}

// InstallManager serves vCenter's DistributedVirtualSwitchManager in the simulator's registry.
func InstallManager() {
	content := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	if content.DvSwitchManager == nil {
		return
	}
	m := &dvsManager{}
	m.Self = *content.DvSwitchManager
	simulator.Map.Put(m)
}

func (m *dvsManager) QueryAvailableDvsSpec(req *types.QueryAvailableDvsSpec) soap.HasFault {
	versions := dvsVersions
	if req.Recommended != nil && !*req.Recommended {
		versions = nil
	}
	specs := make([]types.DistributedVirtualSwitchProductSpec, 0, len(versions))
	for _, version := range versions {
		specs = append(specs, types.DistributedVirtualSwitchProductSpec{Name: "DVS", Vendor: "VMware, Inc.",
			Version: version, ForwardingClass: "etherswitch"})
	}
	return &methods.QueryAvailableDvsSpecBody{Res: &types.QueryAvailableDvsSpecResponse{Returnval: specs}}
}

func (m *dvsManager) QueryDvsByUuid(req *types.QueryDvsByUuid) soap.HasFault {
	body := &methods.QueryDvsByUuidBody{}
	if dvs := ByUUID(req.Uuid); dvs != nil {
		ref := dvs.Self
		body.Res = &types.QueryDvsByUuidResponse{Returnval: &ref}
		return body
	}
	body.Fault_ = simulator.Fault("The object or item referred to could not be found.", &types.NotFound{})
	return body
}

// ByUUID is the distributed switch whose uuid is uuid, or nil.
func ByUUID(uuid string) *simulator.DistributedVirtualSwitch {
	for _, kind := range []string{"VmwareDistributedVirtualSwitch", "DistributedVirtualSwitch"} {
		for _, entity := range simulator.Map.All(kind) {
			if dvs, ok := entity.(*simulator.DistributedVirtualSwitch); ok && dvs.Uuid == uuid {
				return dvs
			}
		}
	}
	return nil
}
