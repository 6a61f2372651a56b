package hostnet

import (
	"fmt"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// TCP/IP stack instances of a host (vSphere Web Services API, HostNetStackInstance, HostNetworkConfigNetStackSpec,
// HostRuntimeInfoNetworkRuntimeInfo; developer.broadcom.com/xapis/vsphere-web-services-api/latest/):
// config.network.netStackInstance holds the configuration of each stack ESXi has (defaultTcpipStack, vmotion,
// vSphereProvisioning); UpdateNetworkConfig with netStackSpec edits one: a DNS or route configuration given replaces
// the stack's, a congestion control algorithm or a requested maximum of connections given replaces that value.
// runtime.networkRuntimeInfo lists the stacks that run: the default stack always, another one once a VMkernel NIC
// uses it, with that stack's NICs. A running stack keeps the connection maximum it started with (ESXi applies a new
// one at reboot); a stack that starts takes its requested one. The default stack's DNS and route configuration is
// the host's own (config.network.dnsConfig, ipRouteConfig), so editing one edits the other.
//
// Not confirmed against a real host: whether a stack other than the default stays in the runtime list after its
// last NIC is removed (here it leaves), and the faults for an unknown stack (NotFound here) and for adding or
// removing a stack through the API (NotSupported here; ESXi creates custom stacks with esxcli).

const defaultNetStack = "defaultTcpipStack"

// congestionAlgorithms are the values ESXi accepts for HostNetStackInstance.congestionControlAlgorithm
// (HostNetStackInstanceCongestionControlAlgorithmType).
var congestionAlgorithms = map[string]bool{"newreno": true, "cubic": true}

func (s *NetworkSystem) UpdateNetworkConfig(req *types.UpdateNetworkConfig) soap.HasFault {
	defer s.refresh()
	body := &methods.UpdateNetworkConfigBody{}
	if fault := s.checkNetStackSpecs(req.Config.NetStackSpec); fault != nil {
		body.Fault_ = fault.SOAP()
		return body
	}
	for _, spec := range req.Config.NetStackSpec {
		s.editNetStack(spec.NetStackInstance)
	}
	return s.sim.UpdateNetworkConfig(req)
}

func (s *NetworkSystem) netStack(key string) *types.HostNetStackInstance {
	network := s.host.Config.Network
	for i := range network.NetStackInstance {
		if network.NetStackInstance[i].Key == key {
			return &network.NetStackInstance[i]
		}
	}
	return nil
}

// checkNetStackSpecs refuses the whole request before any change when one of its stack specs cannot apply.
func (s *NetworkSystem) checkNetStackSpecs(specs []types.HostNetworkConfigNetStackSpec) *vimfault.Fault {
	for _, spec := range specs {
		key := spec.NetStackInstance.Key
		switch {
		case spec.Operation != "" && spec.Operation != string(types.HostConfigChangeOperationEdit):
			return &vimfault.Fault{Fault: &types.NotSupported{}, Msg: fmt.Sprintf(
				"The operation %q on TCP/IP stack %q is not supported.", spec.Operation, key)}
		case s.netStack(key) == nil:
			return &vimfault.Fault{Fault: &types.NotFound{}, Msg: fmt.Sprintf(
				"The TCP/IP stack %q does not exist on host %s.", key, s.host.Name)}
		case spec.NetStackInstance.CongestionControlAlgorithm != "" &&
			!congestionAlgorithms[spec.NetStackInstance.CongestionControlAlgorithm]:
			return vimfault.InvalidArgument("netStackSpec.netStackInstance.congestionControlAlgorithm",
				"%q is not a congestion control algorithm (newreno or cubic)",
				spec.NetStackInstance.CongestionControlAlgorithm)
		case spec.NetStackInstance.RequestedMaxNumberOfConnections < 0:
			return vimfault.InvalidArgument("netStackSpec.netStackInstance.requestedMaxNumberOfConnections",
				"%d is negative", spec.NetStackInstance.RequestedMaxNumberOfConnections)
		}
	}
	return nil
}

func (s *NetworkSystem) editNetStack(spec types.HostNetStackInstance) {
	stack := s.netStack(spec.Key)
	network := s.host.Config.Network
	if spec.DnsConfig != nil {
		stack.DnsConfig = spec.DnsConfig
		if spec.Key == defaultNetStack {
			network.DnsConfig = spec.DnsConfig
		}
	}
	if spec.IpRouteConfig != nil {
		stack.IpRouteConfig = spec.IpRouteConfig
		if spec.Key == defaultNetStack {
			network.IpRouteConfig = spec.IpRouteConfig
		}
	}
	if spec.CongestionControlAlgorithm != "" {
		stack.CongestionControlAlgorithm = spec.CongestionControlAlgorithm
	}
	if spec.RequestedMaxNumberOfConnections > 0 {
		stack.RequestedMaxNumberOfConnections = spec.RequestedMaxNumberOfConnections
	}
	if spec.IpV6Enabled != nil {
		stack.IpV6Enabled = spec.IpV6Enabled
	}
}

// refreshNetStackRuntime derives runtime.networkRuntimeInfo's stack list from the host's stacks and VMkernel NICs.
func (s *NetworkSystem) refreshNetStackRuntime() {
	network := s.host.Config.Network
	if network == nil {
		return
	}
	// A copy: the simulator's hosts start out sharing the sample host's runtime network info.
	info := &types.HostRuntimeInfoNetworkRuntimeInfo{}
	if shared := s.host.Runtime.NetworkRuntimeInfo; shared != nil {
		*info = *shared
	}
	running := map[string]types.HostRuntimeInfoNetStackInstanceRuntimeInfo{}
	for _, stack := range info.NetStackInstanceRuntimeInfo {
		running[stack.NetStackInstanceKey] = stack
	}
	var stacks []types.HostRuntimeInfoNetStackInstanceRuntimeInfo
	for _, stack := range network.NetStackInstance {
		var nics []string
		for _, nic := range network.Vnic {
			key := nic.Spec.NetStackInstanceKey
			if key == stack.Key || (key == "" && stack.Key == defaultNetStack) {
				nics = append(nics, nic.Device)
			}
		}
		if len(nics) == 0 && stack.Key != defaultNetStack {
			continue
		}
		entry, ok := running[stack.Key]
		if !ok {
			entry = types.HostRuntimeInfoNetStackInstanceRuntimeInfo{NetStackInstanceKey: stack.Key, State: "active",
				MaxNumberOfConnections: stack.RequestedMaxNumberOfConnections, CurrentIpV6Enabled: stack.IpV6Enabled}
		}
		entry.VmknicKeys = nics
		stacks = append(stacks, entry)
	}
	info.NetStackInstanceRuntimeInfo = stacks
	s.host.Runtime.NetworkRuntimeInfo = info
}
