package hostnet

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// VMkernel NICs of a host's network system (vSphere Web Services API, HostNetworkSystem.AddVirtualNic,
// UpdateVirtualNic, RemoveVirtualNic): a new NIC takes the next free vmk<n> on a standard port group of the host and
// the default TCP/IP stack unless its spec names another; an unknown port group or NIC is NotFound. A NIC on the
// default stack is a candidate for every VMkernel service, one on the vmotion or provisioning stack only for that
// service (HostVirtualNicManager).

const vnicKeyPrefix = "key-vim.host.VirtualNic-"

func (s *NetworkSystem) AddVirtualNic(req *types.AddVirtualNic) soap.HasFault {
	defer s.refresh()
	body := &methods.AddVirtualNicBody{}
	network := s.host.Config.Network
	if req.Portgroup != "" && !s.hasPortgroup(req.Portgroup) {
		body.Fault_ = notFoundFault(fmt.Sprintf("The port group %s does not exist on host %s.", req.Portgroup,
			s.host.Name))
		return body
	}
	device := nextVmk(network.Vnic)
	spec := req.Nic
	spec.Portgroup = req.Portgroup
	if spec.Mtu == 0 {
		spec.Mtu = 1500
	}
	if spec.NetStackInstanceKey == "" {
		spec.NetStackInstanceKey = "defaultTcpipStack"
	}
	if spec.Mac == "" {
		spec.Mac = fmt.Sprintf("00:50:56:6%x:%02x:%02x", len(network.Vnic)%16, len(s.host.Name)%256,
			len(network.Vnic)*7%256)
	}
	nic := types.HostVirtualNic{Device: device, Key: vnicKeyPrefix + device, Portgroup: req.Portgroup, Spec: spec}
	network.Vnic = append(network.Vnic, nic)
	s.offerToServices(nic)
	body.Res = &types.AddVirtualNicResponse{Returnval: device}
	return body
}

func (s *NetworkSystem) UpdateVirtualNic(req *types.UpdateVirtualNic) soap.HasFault {
	defer s.refresh()
	body := &methods.UpdateVirtualNicBody{}
	network := s.host.Config.Network
	for i := range network.Vnic {
		if network.Vnic[i].Device != req.Device {
			continue
		}
		spec := &network.Vnic[i].Spec
		if req.Nic.Ip != nil {
			spec.Ip = req.Nic.Ip
		}
		if req.Nic.Mtu != 0 {
			spec.Mtu = req.Nic.Mtu
		}
		if req.Nic.Portgroup != "" {
			spec.Portgroup, network.Vnic[i].Portgroup = req.Nic.Portgroup, req.Nic.Portgroup
		}
		if req.Nic.DistributedVirtualPort != nil {
			spec.DistributedVirtualPort = req.Nic.DistributedVirtualPort
		}
		body.Res = &types.UpdateVirtualNicResponse{}
		return body
	}
	body.Fault_ = notFoundFault(fmt.Sprintf("The VMkernel NIC %s does not exist on host %s.", req.Device, s.host.Name))
	return body
}

func (s *NetworkSystem) RemoveVirtualNic(req *types.RemoveVirtualNic) soap.HasFault {
	defer s.refresh()
	body := &methods.RemoveVirtualNicBody{}
	network := s.host.Config.Network
	for i, nic := range network.Vnic {
		if nic.Device != req.Device {
			continue
		}
		network.Vnic = append(network.Vnic[:i:i], network.Vnic[i+1:]...)
		s.withdrawFromServices(nic)
		body.Res = &types.RemoveVirtualNicResponse{}
		return body
	}
	body.Fault_ = notFoundFault(fmt.Sprintf("The VMkernel NIC %s does not exist on host %s.", req.Device, s.host.Name))
	return body
}

func (s *NetworkSystem) hasPortgroup(name string) bool {
	for _, pg := range s.host.Config.Network.Portgroup {
		if pg.Spec.Name == name {
			return true
		}
	}
	return false
}

func nextVmk(nics []types.HostVirtualNic) string {
	used := map[string]bool{}
	for _, nic := range nics {
		used[nic.Device] = true
	}
	for n := 0; ; n++ {
		if device := fmt.Sprintf("vmk%d", n); !used[device] {
			return device
		}
	}
}

// servesOn tells whether a NIC on the given TCP/IP stack may carry a VMkernel service.
func servesOn(stack, nicType string) bool {
	switch stack {
	case "", "defaultTcpipStack":
		return true
	case "vmotion":
		return nicType == "vmotion"
	case "vSphereProvisioning":
		return nicType == "vSphereProvisioning"
	}
	return false
}

func (s *NetworkSystem) offerToServices(nic types.HostVirtualNic) {
	for _, config := range services(s.host) {
		if servesOn(nic.Spec.NetStackInstanceKey, config.NicType) {
			candidate := nic
			candidate.Key = config.NicType + "." + nic.Key
			config.CandidateVnic = append(config.CandidateVnic, candidate)
		}
	}
}

func (s *NetworkSystem) withdrawFromServices(nic types.HostVirtualNic) {
	for _, config := range services(s.host) {
		suffix := "." + nic.Key
		candidates := config.CandidateVnic[:0]
		for _, candidate := range config.CandidateVnic {
			if !strings.HasSuffix(candidate.Key, suffix) {
				candidates = append(candidates, candidate)
			}
		}
		config.CandidateVnic = candidates
		selected := config.SelectedVnic[:0]
		for _, key := range config.SelectedVnic {
			if !strings.HasSuffix(key, suffix) {
				selected = append(selected, key)
			}
		}
		config.SelectedVnic = selected
	}
}

func notFoundFault(message string) *soap.Fault {
	return simulator.Fault(message, &types.NotFound{})
}
