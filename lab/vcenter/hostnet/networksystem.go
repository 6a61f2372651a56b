// Package hostnet holds a host's network as vCenter reports it, over the simulator's objects: the host's
// HostNetworkSystem (networkInfo and networkConfig with the physical and VMkernel NICs, standard switches and their
// bridges, port groups shared by name across a datacenter's hosts, VMkernel NICs, TCP/IP stacks), its
// HostVirtualNicManager, and the physical NICs a topology asks for. It needs nothing of the lab: the lab registers
// its objects for each host (NewNetworkSystem, NewVirtualNicManager) and adds NICs (AddPhysicalNics).
package hostnet

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/simobj"
	"vcsim/vimfault"
)

// NetworkSystem is a host's HostNetworkSystem (configManager.networkSystem) as vCenter reports it. The
// simulator's networkInfo lists only the standard switches' names and port groups; vCenter's lists the host's
// physical and VMkernel NICs too, the same objects as the host's config.network, and networkConfig is the
// configuration (HostNetworkConfig) that gives that state (vSphere Web Services API, HostNetworkSystem:
// "networkConfig: the network configuration ... that the host has", "networkInfo: the network configuration and
// runtime information"). The simulator's object keeps doing the work of its methods; after each one, and on every
// read, both properties are derived again from it and the host, so changes show in them.
type NetworkSystem struct {
	mo.HostNetworkSystem // first, as the simulator's search index needs
	sim                  *simulator.HostNetworkSystem
	host                 *simulator.HostSystem
}

func NewNetworkSystem(host *simulator.HostSystem) *NetworkSystem {
	sim, ok := simulator.Map.Get(*host.ConfigManager.NetworkSystem).(*simulator.HostNetworkSystem)
	if !ok {
		return nil
	}
	s := &NetworkSystem{sim: sim, host: host}
	s.refresh()
	return s
}

// Get is what the property collector reads (the simulator calls it for wrapper types).
func (s *NetworkSystem) Get() mo.Reference {
	s.refresh()
	return &s.HostNetworkSystem
}

func (s *NetworkSystem) refresh() {
	view := s.sim.HostNetworkSystem
	network := s.host.Config.Network
	info := types.HostNetworkInfo{}
	if view.NetworkInfo != nil {
		info = *view.NetworkInfo
	}
	if network != nil {
		info.Pnic, info.Vnic, info.DnsConfig, info.IpRouteConfig = network.Pnic, network.Vnic, network.DnsConfig,
			network.IpRouteConfig
		info.Vswitch = mergeSwitches(info.Vswitch, network.Vswitch)
		info.NetStackInstance, info.IpV6Enabled = network.NetStackInstance, network.IpV6Enabled
	}
	view.NetworkInfo = &info
	view.NetworkConfig = networkConfig(&info)
	s.refreshNetStackRuntime()
	s.HostNetworkSystem = view
	if network != nil {
		// The host's config.network is the same state: switches and port groups added through the API show there.
		network.Vswitch, network.Portgroup = info.Vswitch, info.Portgroup
	}
}

func (s *NetworkSystem) RemoveVirtualSwitch(c *types.RemoveVirtualSwitch) soap.HasFault {
	defer s.refresh()
	return s.sim.RemoveVirtualSwitch(c)
}

func (s *NetworkSystem) QueryNetworkHint(req *types.QueryNetworkHint) soap.HasFault {
	return s.sim.QueryNetworkHint(req)
}

// mergeSwitches completes the simulator's switches (name and port groups, kept up to date by its methods) with
// the host's description of the same switch (key, ports, uplinks, MTU, spec).
func mergeSwitches(own []types.HostVirtualSwitch, host []types.HostVirtualSwitch) []types.HostVirtualSwitch {
	out := make([]types.HostVirtualSwitch, len(own))
	for i, vswitch := range own {
		out[i] = vswitch
		for _, described := range host {
			if described.Name != vswitch.Name {
				continue
			}
			portgroups := vswitch.Portgroup
			out[i] = described
			out[i].Portgroup = portgroups
		}
		if out[i].Key == "" {
			out[i].Key = "key-vim.host.VirtualSwitch-" + vswitch.Name
		}
		if out[i].Spec.NumPorts == 0 {
			out[i].Spec.NumPorts = 128
		}
	}
	return out
}

func networkConfig(info *types.HostNetworkInfo) *types.HostNetworkConfig {
	config := &types.HostNetworkConfig{DnsConfig: info.DnsConfig, IpRouteConfig: info.IpRouteConfig,
		IpV6Enabled: info.IpV6Enabled}
	for _, vswitch := range info.Vswitch {
		spec := vswitch.Spec
		config.Vswitch = append(config.Vswitch, types.HostVirtualSwitchConfig{Name: vswitch.Name, Spec: &spec})
	}
	for _, portgroup := range info.Portgroup {
		spec := portgroup.Spec
		config.Portgroup = append(config.Portgroup, types.HostPortGroupConfig{Spec: &spec})
	}
	for _, pnic := range info.Pnic {
		config.Pnic = append(config.Pnic, types.PhysicalNicConfig{Device: pnic.Device, Spec: pnic.Spec})
	}
	for _, vnic := range info.Vnic {
		spec := vnic.Spec
		config.Vnic = append(config.Vnic, types.HostVirtualNicConfig{Device: vnic.Device, Portgroup: vnic.Portgroup,
			Spec: &spec})
	}
	return config
}

// VirtualNicManager is a host's HostVirtualNicManager (configManager.VirtualNicManager): which VMkernel NICs carry
// which service (management, vmotion, vsan, ...). Its info is the host's config.virtualNicManagerInfo.
// QueryNetConfig answers one service's candidates and selection, or InvalidArgument for a service the host does
// not have; SelectVnicForNicType and DeselectVnicForNicType change the selection (vSphere Web Services API,
// HostVirtualNicManager).
type VirtualNicManager struct {
	mo.HostVirtualNicManager
	host *simulator.HostSystem
}

func NewVirtualNicManager(host *simulator.HostSystem) *VirtualNicManager {
	m := &VirtualNicManager{host: host}
	m.Self = types.ManagedObjectReference{Type: "HostVirtualNicManager", Value: "vnic-mgr-" + simobj.Number(host.Self)}
	m.keepOnlyHostNics()
	return m
}

// keepOnlyHostNics drops the simulator's sample candidates for VMkernel NICs the host does not have.
func (m *VirtualNicManager) keepOnlyHostNics() {
	network := m.host.Config.Network
	if network == nil {
		return
	}
	present := map[string]bool{}
	for _, nic := range network.Vnic {
		present[nic.Device] = true
	}
	for _, config := range services(m.host) {
		kept := config.CandidateVnic[:0]
		for _, nic := range config.CandidateVnic {
			if present[nic.Device] {
				kept = append(kept, nic)
			}
		}
		config.CandidateVnic = kept
	}
}

func (m *VirtualNicManager) Get() mo.Reference {
	view := m.HostVirtualNicManager
	if info := m.host.Config.VirtualNicManagerInfo; info != nil {
		view.Info = *info
	}
	return &view
}

func (m *VirtualNicManager) netConfig(nicType string) (*types.VirtualNicManagerNetConfig, *vimfault.Fault) {
	for _, config := range services(m.host) {
		if config.NicType == nicType {
			return config, nil
		}
	}
	return nil, vimfault.InvalidArgument("nicType", "%q is not a service of host %s", nicType, m.host.Name)
}

func (m *VirtualNicManager) QueryNetConfig(req *types.QueryNetConfig) soap.HasFault {
	body := &methods.QueryNetConfigBody{}
	config, fault := m.netConfig(req.NicType)
	if fault != nil {
		body.Fault_ = fault.SOAP()
		return body
	}
	answer := *config
	body.Res = &types.QueryNetConfigResponse{Returnval: &answer}
	return body
}

// services are the host's VMkernel NIC services (virtualNicManagerInfo.netConfig), each to read or change in place.
func services(host *simulator.HostSystem) []*types.VirtualNicManagerNetConfig {
	info := host.Config.VirtualNicManagerInfo
	if info == nil {
		return nil
	}
	configs := make([]*types.VirtualNicManagerNetConfig, len(info.NetConfig))
	for i := range info.NetConfig {
		configs[i] = &info.NetConfig[i]
	}
	return configs
}

// candidateKey is the key of the host's VMkernel NIC named device among a service's candidates.
func candidateKey(config *types.VirtualNicManagerNetConfig, device, host string) (string, *vimfault.Fault) {
	for _, vnic := range config.CandidateVnic {
		if vnic.Device == device || vnic.Key == device {
			return vnic.Key, nil
		}
	}
	return "", vimfault.InvalidArgument("device", "no VMkernel NIC %q on host %s for %s", device, host, config.NicType)
}

// serviceNic finds a service's config and the key of one of its candidate NICs.
func (m *VirtualNicManager) serviceNic(nicType, device string) (*types.VirtualNicManagerNetConfig, string, *soap.Fault) {
	config, fault := m.netConfig(nicType)
	key := ""
	if fault == nil {
		key, fault = candidateKey(config, device, m.host.Name)
	}
	if fault != nil {
		return nil, "", fault.SOAP()
	}
	return config, key, nil
}

func (m *VirtualNicManager) SelectVnicForNicType(req *types.SelectVnicForNicType) soap.HasFault {
	body := &methods.SelectVnicForNicTypeBody{}
	config, key, fault := m.serviceNic(req.NicType, req.Device)
	if fault != nil {
		body.Fault_ = fault
		return body
	}
	if !config.MultiSelectAllowed {
		config.SelectedVnic = nil
	}
	if !lists.Contains(config.SelectedVnic, key) {
		config.SelectedVnic = append(config.SelectedVnic, key)
	}
	body.Res = &types.SelectVnicForNicTypeResponse{}
	return body
}

func (m *VirtualNicManager) DeselectVnicForNicType(req *types.DeselectVnicForNicType) soap.HasFault {
	body := &methods.DeselectVnicForNicTypeBody{}
	config, key, fault := m.serviceNic(req.NicType, req.Device)
	if fault != nil {
		body.Fault_ = fault
		return body
	}
	kept := config.SelectedVnic[:0]
	for _, selected := range config.SelectedVnic {
		if selected != key {
			kept = append(kept, selected)
		}
	}
	config.SelectedVnic = kept
	body.Res = &types.DeselectVnicForNicTypeResponse{}
	return body
}
