package hostconfig

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/vimfault"
)

// PowerSystem is a host's HostPowerSystem (configManager.powerSystem): the power policies the host offers
// (capability.availablePolicy: static, dynamic, low, custom) and the one in use (info.currentPolicy, "Balanced",
// dynamic, by default on ESXi). ConfigurePowerPolicy takes one of the offered keys and refuses another with
// InvalidArgument (vSphere Web Services API, HostPowerSystem). The host's config.powerSystemInfo follows.
type PowerSystem struct {
	mo.HostPowerSystem
	host *simulator.HostSystem
}

func NewPowerSystem(host *simulator.HostSystem) *PowerSystem {
	s := &PowerSystem{host: host}
	s.Self = types.ManagedObjectReference{Type: "HostPowerSystem", Value: "powerSystem-" + simobj.Number(host.Self)}
	if c := host.Config.PowerSystemCapability; c != nil {
		s.Capability = types.PowerSystemCapability{AvailablePolicy: append([]types.HostPowerPolicy(nil),
			c.AvailablePolicy...)}
	}
	if i := host.Config.PowerSystemInfo; i != nil {
		s.Info = *i
		info := *i
		host.Config.PowerSystemInfo = &info // the host's own copy: the simulator's template is shared
	}
	return s
}

func (s *PowerSystem) ConfigurePowerPolicy(req *types.ConfigurePowerPolicy) soap.HasFault {
	body := &methods.ConfigurePowerPolicyBody{}
	for _, policy := range s.Capability.AvailablePolicy {
		if policy.Key == req.Key {
			simulator.Map.Update(s, []types.PropertyChange{{Name: "info.currentPolicy", Val: policy}})
			info := types.PowerSystemInfo{CurrentPolicy: policy}
			simulator.Map.Update(s.host, []types.PropertyChange{{Name: "config.powerSystemInfo", Val: &info}})
			body.Res = &types.ConfigurePowerPolicyResponse{}
			return body
		}
	}
	body.Fault_ = vimfault.InvalidArgument("key", "%d is not the key of one of the host's available power policies",
		req.Key).SOAP()
	return body
}
