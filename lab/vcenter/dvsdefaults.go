package main

import (
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Defaults vCenter gives a distributed switch and its port groups when a client creates them without stating every
// setting (vSphere Web Services API, VMwareDVSConfigInfo, DVPortgroupConfigInfo, DVSMacManagementPolicy,
// DVSMacLearningPolicy; developer.broadcom.com/xapis/vsphere-web-services-api/latest/):
//   - the switch's uplink port group ("<switch>-DVUplinks-<n>", which the simulator creates) is listed in
//     config.uplinkPortgroup and marked uplink; the uplinks are named "Uplink 1".."Uplink 4" unless the spec names
//     them;
//   - the switch's default port settings and each port group's carry a MAC management policy: promiscuous mode,
//     MAC address changes and forged transmits rejected, MAC learning off (unicast flooding allowed, limit 4096,
//     limit policy DROP), and the same three choices in the older security policy; a port group's settings are
//     inherited from the switch unless its spec sets them.

func defaultMacManagement(inherited bool) *types.DVSMacManagementPolicy {
	limit := int32(4096)
	return &types.DVSMacManagementPolicy{
		InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
		AllowPromiscuous:  types.NewBool(false), MacChanges: types.NewBool(false), ForgedTransmits: types.NewBool(false),
		MacLearningPolicy: &types.DVSMacLearningPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
			AllowUnicastFlooding: types.NewBool(true), Limit: &limit, LimitPolicy: "DROP"},
	}
}

func defaultSecurity(inherited bool) *types.DVSSecurityPolicy {
	reject := func() *types.BoolPolicy {
		return &types.BoolPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
			Value: types.NewBool(false)}
	}
	return &types.DVSSecurityPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
		AllowPromiscuous: reject(), MacChanges: reject(), ForgedTransmits: reject()}
}

// completePortSetting fills the MAC management and security policies a port setting lacks.
func completePortSetting(setting types.BaseDVPortSetting, inherited bool) types.BaseDVPortSetting {
	vmware, ok := setting.(*types.VMwareDVSPortSetting)
	if setting == nil {
		vmware, ok = &types.VMwareDVSPortSetting{}, true
	}
	if !ok {
		return setting
	}
	if vmware.MacManagementPolicy == nil {
		vmware.MacManagementPolicy = defaultMacManagement(inherited)
	}
	if vmware.SecurityPolicy == nil {
		vmware.SecurityPolicy = defaultSecurity(inherited)
	}
	return vmware
}

// createdDVS completes a switch created with CreateDVS_Task.
func (l *Lab) createdDVS(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	ref, ok := result.(types.ManagedObjectReference)
	if fault != nil || !ok {
		return result, fault
	}
	dvs, ok := simulator.Map.Get(ref).(*simulator.DistributedVirtualSwitch)
	if !ok {
		return result, fault
	}
	config := dvs.Config.GetDVSConfigInfo()
	config.DefaultPortConfig = completePortSetting(config.DefaultPortConfig, false)
	if config.UplinkPortPolicy == nil {
		config.UplinkPortPolicy = &types.DVSNameArrayUplinkPortPolicy{
			UplinkPortName: []string{"Uplink 1", "Uplink 2", "Uplink 3", "Uplink 4"}}
	}
	prefix := dvs.Name + "-DVUplinks"
	for _, pgRef := range dvs.Portgroup {
		pg, ok := simulator.Map.Get(pgRef).(*simulator.DistributedVirtualPortgroup)
		if !ok || !strings.HasPrefix(pg.Name, prefix) {
			continue
		}
		pg.Config.Uplink = types.NewBool(true)
		if len(config.UplinkPortgroup) == 0 {
			config.UplinkPortgroup = []types.ManagedObjectReference{pg.Self}
		}
	}
	l.logf("distributed switch %s created with uplink port group %v", dvs.Name, config.UplinkPortgroup)
	return result, fault
}

// addedDVPortgroups completes the port groups AddDVPortgroup_Task created: their settings inherit the switch's.
func (l *Lab) addedDVPortgroups(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	if fault != nil || t.Info.Entity == nil {
		return result, fault
	}
	dvs, ok := simulator.Map.Get(*t.Info.Entity).(*simulator.DistributedVirtualSwitch)
	if !ok {
		return result, fault
	}
	for _, pgRef := range dvs.Portgroup {
		if pg, ok := simulator.Map.Get(pgRef).(*simulator.DistributedVirtualPortgroup); ok {
			pg.Config.DefaultPortConfig = completePortSetting(pg.Config.DefaultPortConfig, true)
			if pg.Config.Uplink == nil {
				pg.Config.Uplink = types.NewBool(false)
			}
		}
	}
	return result, fault
}
