package hostnet

import (
	"fmt"

	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/vimfault"
)

// Standard switches as a host keeps them (vSphere Web Services API, HostNetworkSystem.AddVirtualSwitch and
// UpdateVirtualSwitch, HostVirtualSwitch, HostVirtualSwitchSpec): the switch keeps the spec it was given, completed
// with the host's defaults where the spec leaves a part out, and reports its uplinks (pnic), ports and MTU from it.
// The defaults are those ESXi gives its first switch, vSwitch0, as govmomi recorded them from a host
// (esx.HostConfigInfo): not confirmed for switches added through the API. A physical NIC can bridge one switch
// only: bridging one in use fails with ResourceInUse (documented for both methods); one the host does not have fails
// with NotFound (the fault ESXi gives here is not documented).

func (s *NetworkSystem) AddVirtualSwitch(c *types.AddVirtualSwitch) soap.HasFault {
	defer s.refresh()
	spec := types.HostVirtualSwitchSpec{}
	if c.Spec != nil {
		spec = *c.Spec
	}
	if fault := s.checkBridge(c.VswitchName, spec.Bridge); fault != nil {
		return &methods.AddVirtualSwitchBody{Fault_: fault}
	}
	body := s.sim.AddVirtualSwitch(c)
	if body.Fault() == nil {
		s.describeSwitch(c.VswitchName, completeSwitchSpec(spec, nil))
	}
	return body
}

// UpdateVirtualSwitch replaces a switch's spec; a part the new spec leaves out keeps its current value.
func (s *NetworkSystem) UpdateVirtualSwitch(req *types.UpdateVirtualSwitch) soap.HasFault {
	defer s.refresh()
	body := &methods.UpdateVirtualSwitchBody{}
	s.refresh()
	index := switchIndex(s.NetworkInfo.Vswitch, req.VswitchName)
	if index < 0 {
		body.Fault_ = notFoundFault(fmt.Sprintf("The virtual switch %s was not found", req.VswitchName))
		return body
	}
	if fault := s.checkBridge(req.VswitchName, req.Spec.Bridge); fault != nil {
		body.Fault_ = fault
		return body
	}
	s.describeSwitch(req.VswitchName, completeSwitchSpec(req.Spec, &s.NetworkInfo.Vswitch[index].Spec))
	body.Res = &types.UpdateVirtualSwitchResponse{}
	return body
}

// checkBridge refuses NICs the host does not have and NICs that bridge another switch.
func (s *NetworkSystem) checkBridge(name string, bridge types.BaseHostVirtualSwitchBridge) *soap.Fault {
	bond, ok := bridge.(*types.HostVirtualSwitchBondBridge)
	if !ok {
		return nil
	}
	s.refresh()
	for _, nic := range bond.NicDevice {
		if !s.hasPhysicalNic(nic) {
			return notFoundFault(fmt.Sprintf("The physical NIC %s was not found on the host", nic))
		}
		for _, vswitch := range s.NetworkInfo.Vswitch {
			if vswitch.Name != name && lists.Contains(vswitch.Pnic, physicalNicKey(nic)) {
				return (&vimfault.Fault{Fault: &types.ResourceInUse{Name: nic},
					Msg: fmt.Sprintf("The physical NIC %s is already in use by %s", nic, vswitch.Name)}).SOAP()
			}
		}
	}
	return nil
}

func (s *NetworkSystem) hasPhysicalNic(device string) bool {
	for _, pnic := range s.NetworkInfo.Pnic {
		if pnic.Device == device {
			return true
		}
	}
	return false
}

func physicalNicKey(device string) string { return "key-vim.host.PhysicalNic-" + device }

// describeSwitch records a switch's spec in the host's description of its switches (config.network), which the
// network system merges into what it reports.
func (s *NetworkSystem) describeSwitch(name string, spec types.HostVirtualSwitchSpec) {
	network := s.host.Config.Network
	if network == nil {
		return
	}
	described := types.HostVirtualSwitch{Name: name, Key: "key-vim.host.VirtualSwitch-" + name}
	index := -1
	for i, vswitch := range network.Vswitch {
		if vswitch.Name == name {
			described, index = vswitch, i
		}
	}
	described.Spec, described.NumPorts, described.NumPortsAvailable = spec, spec.NumPorts, spec.NumPorts
	described.Mtu = spec.Mtu
	if described.Mtu == 0 {
		described.Mtu = 1500
	}
	described.Pnic = nil
	if bond, ok := spec.Bridge.(*types.HostVirtualSwitchBondBridge); ok {
		for _, nic := range bond.NicDevice {
			described.Pnic = append(described.Pnic, physicalNicKey(nic))
		}
	}
	if index < 0 {
		network.Vswitch = append(network.Vswitch, described)
	} else {
		network.Vswitch[index] = described
	}
}

// completeSwitchSpec fills what a spec leaves out: from the switch's current spec when there is one, else from the
// host's defaults (128 ports, the policy of vSwitch0 with the bridged NICs active).
func completeSwitchSpec(spec types.HostVirtualSwitchSpec,
	current *types.HostVirtualSwitchSpec) types.HostVirtualSwitchSpec {
	template := esx.HostConfigInfo.Network.Vswitch[0].Spec
	defaults := types.HostNetworkPolicy{}
	if policy := template.Policy; policy != nil {
		defaults = *policy
		teaming := *policy.NicTeaming
		teaming.NicOrder = &types.HostNicOrderPolicy{ActiveNic: bridgedNics(spec.Bridge)}
		defaults.NicTeaming = &teaming
	}
	if current != nil && current.Policy != nil {
		defaults = *current.Policy
	}
	if spec.NumPorts == 0 {
		spec.NumPorts = 128
		if current != nil {
			spec.NumPorts = current.NumPorts
		}
	}
	if bond, ok := spec.Bridge.(*types.HostVirtualSwitchBondBridge); ok {
		completed := *bond
		defaultBond := template.Bridge.(*types.HostVirtualSwitchBondBridge)
		if completed.Beacon == nil {
			completed.Beacon = defaultBond.Beacon
		}
		if completed.LinkDiscoveryProtocolConfig == nil {
			completed.LinkDiscoveryProtocolConfig = defaultBond.LinkDiscoveryProtocolConfig
		}
		spec.Bridge = &completed
	}
	policy := defaults
	if given := spec.Policy; given != nil {
		if given.Security != nil {
			policy.Security = given.Security
		}
		if given.NicTeaming != nil {
			policy.NicTeaming = given.NicTeaming
		}
		if given.OffloadPolicy != nil {
			policy.OffloadPolicy = given.OffloadPolicy
		}
		if given.ShapingPolicy != nil {
			policy.ShapingPolicy = given.ShapingPolicy
		}
	}
	spec.Policy = &policy
	return spec
}

func bridgedNics(bridge types.BaseHostVirtualSwitchBridge) []string {
	if bond, ok := bridge.(*types.HostVirtualSwitchBondBridge); ok {
		return append([]string{}, bond.NicDevice...)
	}
	return nil
}
