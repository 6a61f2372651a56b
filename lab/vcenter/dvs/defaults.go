package dvs

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
//   - the switch's default port settings and each port group's carry every policy (not blocked, no traffic
//     shaping, VLAN 0, teaming by originating port with failback and every uplink active, LACP off, NetFlow off;
//     a MAC management policy with promiscuous mode, MAC address changes and forged transmits rejected and MAC
//     learning off: unicast flooding allowed, limit 4096, limit policy DROP; the same three choices in the older
//     security policy); what a port group's spec does not set is inherited from the switch, also after a
//     ReconfigureDVPortgroup_Task. Values from the vSphere Client's defaults for a new switch; not confirmed one by
//     one against the API's answer.

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

func boolPolicy(inherited, value bool) *types.BoolPolicy {
	return &types.BoolPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
		Value: types.NewBool(value)}
}

func longPolicy(inherited bool, value int64) *types.LongPolicy {
	return &types.LongPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}, Value: value}
}

func stringPolicy(inherited bool, value string) *types.StringPolicy {
	return &types.StringPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}, Value: value}
}

// completeShaping fills a traffic shaping policy: off, 100 Mbit/s average and peak, 100 MiB bursts.
func completeShaping(policy *types.DVSTrafficShapingPolicy, inherited bool) *types.DVSTrafficShapingPolicy {
	if policy == nil {
		policy = &types.DVSTrafficShapingPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}}
	}
	if policy.Enabled == nil {
		policy.Enabled = boolPolicy(inherited, false)
	}
	if policy.AverageBandwidth == nil {
		policy.AverageBandwidth = longPolicy(inherited, 100000000)
	}
	if policy.PeakBandwidth == nil {
		policy.PeakBandwidth = longPolicy(inherited, 100000000)
	}
	if policy.BurstSize == nil {
		policy.BurstSize = longPolicy(inherited, 104857600)
	}
	return policy
}

// completeTeaming fills a teaming policy: route by originating port, notify switches, fail back, link status
// only, every uplink active.
func completeTeaming(policy *types.VmwareUplinkPortTeamingPolicy, inherited bool,
	uplinks []string) *types.VmwareUplinkPortTeamingPolicy {
	if policy == nil {
		policy = &types.VmwareUplinkPortTeamingPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}}
	}
	if policy.Policy == nil {
		policy.Policy = stringPolicy(inherited, "loadbalance_srcid")
	}
	if policy.ReversePolicy == nil {
		policy.ReversePolicy = boolPolicy(inherited, true)
	}
	if policy.NotifySwitches == nil {
		policy.NotifySwitches = boolPolicy(inherited, true)
	}
	if policy.RollingOrder == nil {
		policy.RollingOrder = boolPolicy(inherited, false)
	}
	if policy.FailureCriteria == nil {
		policy.FailureCriteria = &types.DVSFailureCriteria{
			InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
			CheckSpeed:        stringPolicy(inherited, "minimum"),
			Speed:             &types.IntPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}, Value: 10},
			CheckDuplex:       boolPolicy(inherited, false), FullDuplex: boolPolicy(inherited, false),
			CheckErrorPercent: boolPolicy(inherited, false),
			Percentage:        &types.IntPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}},
			CheckBeacon:       boolPolicy(inherited, false)}
	}
	if policy.UplinkPortOrder == nil {
		policy.UplinkPortOrder = &types.VMwareUplinkPortOrderPolicy{
			InheritablePolicy: types.InheritablePolicy{Inherited: inherited}, ActiveUplinkPort: uplinks}
	}
	return policy
}

// completePortSetting fills every policy a port setting lacks with vCenter's default (inherited from the switch
// for a port group); what the setting states stays.
func completePortSetting(setting types.BaseDVPortSetting, inherited bool, uplinks []string) types.BaseDVPortSetting {
	vmware, ok := setting.(*types.VMwareDVSPortSetting)
	if setting == nil {
		vmware, ok = &types.VMwareDVSPortSetting{}, true
	}
	if !ok {
		return setting
	}
	if vmware.Blocked == nil {
		vmware.Blocked = boolPolicy(inherited, false)
	}
	if vmware.VmDirectPathGen2Allowed == nil {
		vmware.VmDirectPathGen2Allowed = boolPolicy(inherited, false)
	}
	vmware.InShapingPolicy = completeShaping(vmware.InShapingPolicy, inherited)
	vmware.OutShapingPolicy = completeShaping(vmware.OutShapingPolicy, inherited)
	if vmware.VendorSpecificConfig == nil {
		vmware.VendorSpecificConfig = &types.DVSVendorSpecificConfig{
			InheritablePolicy: types.InheritablePolicy{Inherited: inherited}}
	}
	if vmware.NetworkResourcePoolKey == nil {
		vmware.NetworkResourcePoolKey = stringPolicy(inherited, "-1")
	}
	if vmware.FilterPolicy == nil {
		vmware.FilterPolicy = &types.DvsFilterPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited}}
	}
	if vmware.Vlan == nil {
		vmware.Vlan = &types.VmwareDistributedVirtualSwitchVlanIdSpec{
			VmwareDistributedVirtualSwitchVlanSpec: types.VmwareDistributedVirtualSwitchVlanSpec{
				InheritablePolicy: types.InheritablePolicy{Inherited: inherited}}}
	}
	vmware.UplinkTeamingPolicy = completeTeaming(vmware.UplinkTeamingPolicy, inherited, uplinks)
	if vmware.SecurityPolicy == nil {
		vmware.SecurityPolicy = defaultSecurity(inherited)
	}
	if vmware.IpfixEnabled == nil {
		vmware.IpfixEnabled = boolPolicy(inherited, false)
	}
	if vmware.TxUplink == nil {
		vmware.TxUplink = boolPolicy(inherited, false)
	}
	if vmware.LacpPolicy == nil {
		vmware.LacpPolicy = &types.VMwareUplinkLacpPolicy{InheritablePolicy: types.InheritablePolicy{Inherited: inherited},
			Enable: boolPolicy(inherited, false), Mode: stringPolicy(inherited, "passive")}
	}
	if vmware.MacManagementPolicy == nil {
		vmware.MacManagementPolicy = defaultMacManagement(inherited)
	} else if vmware.MacManagementPolicy.MacLearningPolicy == nil {
		vmware.MacManagementPolicy.MacLearningPolicy = defaultMacManagement(inherited).MacLearningPolicy
	}
	return vmware
}

// createdDVS completes a switch created with CreateDVS_Task.
func (s *Switches) createdDVS(t *simulator.Task, original TaskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	ref, ok := result.(types.ManagedObjectReference)
	if fault != nil || !ok {
		return result, fault
	}
	dvs, ok := simulator.Map.Get(ref).(*simulator.DistributedVirtualSwitch)
	if !ok {
		return result, fault
	}
	s.completeCreatedDVSConfig(dvs)
	config := dvs.Config.GetDVSConfigInfo()
	if config.UplinkPortPolicy == nil {
		config.UplinkPortPolicy = &types.DVSNameArrayUplinkPortPolicy{
			UplinkPortName: []string{"Uplink 1", "Uplink 2", "Uplink 3", "Uplink 4"}}
	}
	config.DefaultPortConfig = completePortSetting(config.DefaultPortConfig, false, uplinkNames(dvs))
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
	s.lab.Logf("distributed switch %s created with uplink port group %v", dvs.Name, config.UplinkPortgroup)
	return result, fault
}

// addedDVPortgroups completes the port groups AddDVPortgroup_Task created: their settings inherit the switch's.
func (s *Switches) addedDVPortgroups(t *simulator.Task, original TaskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	if fault != nil || t.Info.Entity == nil {
		return result, fault
	}
	if dvs, ok := simulator.Map.Get(*t.Info.Entity).(*simulator.DistributedVirtualSwitch); ok {
		for _, pgRef := range dvs.Portgroup {
			if pg, ok := simulator.Map.Get(pgRef).(*simulator.DistributedVirtualPortgroup); ok {
				completePortgroup(dvs, pg)
			}
		}
	}
	return result, fault
}

// reconfiguredDVPortgroup completes a port group after ReconfigureDVPortgroup_Task, which takes the spec's
// settings as they are.
func (s *Switches) reconfiguredDVPortgroup(t *simulator.Task, original TaskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	if fault != nil || t.Info.Entity == nil {
		return result, fault
	}
	if pg, ok := simulator.Map.Get(*t.Info.Entity).(*simulator.DistributedVirtualPortgroup); ok &&
		pg.Config.DistributedVirtualSwitch != nil {
		if dvs, ok := simulator.Map.Get(*pg.Config.DistributedVirtualSwitch).(*simulator.DistributedVirtualSwitch); ok {
			completePortgroup(dvs, pg)
		}
	}
	return result, fault
}

func completePortgroup(dvs *simulator.DistributedVirtualSwitch, pg *simulator.DistributedVirtualPortgroup) {
	pg.Config.DefaultPortConfig = completePortSetting(pg.Config.DefaultPortConfig, true, uplinkNames(dvs))
	if pg.Config.Uplink == nil {
		pg.Config.Uplink = types.NewBool(false)
	}
}
