// Package hostservices is a host's HostServiceSystem (configManager.serviceSystem) as ESXi reports it: the default
// service list, starting, stopping and restarting a service, refreshing the list and a service's policy. Starting or
// restarting Xorg is what applies the host's graphics configuration to its GPUs; the package tells the lab when
// (Lab.XorgStarted), which does the rest.
package hostservices

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/vimfault"
)

// Xorg is the key of ESXi's X.Org Server service.
const Xorg = "xorg"

var policies = []string{"on", "off", "automatic"}

// Lab is what a host's service system needs of the lab.
type Lab interface {
	// Update changes properties of a simulator object so that property collector waiters see the change.
	Update(obj mo.Reference, changes ...types.PropertyChange)
	// XorgStarted tells the lab that Xorg started or restarted on a host: its GPUs take their configured graphics.
	XorgStarted(host types.ManagedObjectReference)
}

// defaultServices is the service list of an ESXi host as configManager.serviceSystem reports it.
func defaultServices() []types.HostService {
	service := func(key, label string, running bool, policy string, ruleset ...string) types.HostService {
		return types.HostService{Key: key, Label: label, Running: running, Policy: policy, Ruleset: ruleset}
	}
	return []types.HostService{
		service("DCUI", "Direct Console UI", true, "on"),
		service("TSM", "ESXi Shell", false, "off"),
		service("TSM-SSH", "SSH", false, "off", "sshServer"),
		service("lbtd", "Load-Based Teaming Daemon", true, "on"),
		service("ntpd", "NTP Daemon", false, "off", "ntpClient"),
		service("sfcbd-watchdog", "CIM Server", false, "off", "CIMHttpServer", "CIMHttpsServer"),
		service("snmpd", "SNMP Server", false, "off", "snmp"),
		service("vpxa", "VMware vCenter Agent", true, "on", "vpxHeartbeats"),
		service(Xorg, "X.Org Server", true, "on"),
	}
}

// System is a host's HostServiceSystem (configManager.serviceSystem), starting with ESXi's default services.
type System struct {
	mo.HostServiceSystem

	lab      Lab
	host     types.ManagedObjectReference
	name     string
	services []types.HostService
}

// New makes the service system of a host (name is the host's, for faults); the caller puts it in the simulator's
// registry and points the host's configManager.serviceSystem and config.service at it.
func New(lab Lab, host types.ManagedObjectReference, name string) *System {
	s := &System{lab: lab, host: host, name: name, services: defaultServices()}
	s.Self = types.ManagedObjectReference{Type: "HostServiceSystem", Value: "serviceSystem-" + host.Value}
	s.ServiceInfo = types.HostServiceInfo{Service: s.List()}
	return s
}

// List is a copy of the host's services as they are now.
func (s *System) List() []types.HostService {
	list := make([]types.HostService, len(s.services))
	for i, svc := range s.services {
		svc.Ruleset = append([]string(nil), svc.Ruleset...)
		list[i] = svc
	}
	return list
}

func (s *System) service(id string) (*types.HostService, *vimfault.Fault) {
	for i := range s.services {
		if s.services[i].Key == id {
			return &s.services[i], nil
		}
	}
	keys := make([]string, len(s.services))
	for i, svc := range s.services {
		keys[i] = svc.Key
	}
	return nil, &vimfault.Fault{
		Fault: &types.NotFound{},
		Msg: fmt.Sprintf("The object or item referred to could not be found: service %q on host %s (services: %s)",
			id, s.name, strings.Join(keys, ", ")),
	}
}

// setRunning starts or stops a service; (re)starting Xorg applies the graphics configuration.
func (s *System) setRunning(id string, running, restart bool) *vimfault.Fault {
	svc, f := s.service(id)
	if f != nil {
		return f
	}
	started := running && (restart || !svc.Running)
	svc.Running = running
	if id == Xorg && started {
		s.lab.XorgStarted(s.host)
	}
	s.publish()
	return nil
}

// publish copies the services into serviceInfo and into the host's config.service.
func (s *System) publish() {
	s.lab.Update(s, types.PropertyChange{Name: "serviceInfo", Val: types.HostServiceInfo{Service: s.List()}})
	if host, ok := simulator.Map.Get(s.host).(*simulator.HostSystem); ok {
		s.lab.Update(host, types.PropertyChange{Name: "config.service", Val: &types.HostServiceInfo{Service: s.List()}})
	}
}

func (s *System) RestartService(req *types.RestartService) soap.HasFault {
	body := &methods.RestartServiceBody{}
	if f := s.setRunning(req.Id, true, true); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	body.Res = &types.RestartServiceResponse{}
	return body
}

func (s *System) StartService(req *types.StartService) soap.HasFault {
	body := &methods.StartServiceBody{}
	if f := s.setRunning(req.Id, true, false); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	body.Res = &types.StartServiceResponse{}
	return body
}

func (s *System) StopService(req *types.StopService) soap.HasFault {
	body := &methods.StopServiceBody{}
	if f := s.setRunning(req.Id, false, false); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	body.Res = &types.StopServiceResponse{}
	return body
}

func (s *System) RefreshServices(req *types.RefreshServices) soap.HasFault {
	s.publish()
	return &methods.RefreshServicesBody{Res: &types.RefreshServicesResponse{}}
}

func (s *System) UpdateServicePolicy(req *types.UpdateServicePolicy) soap.HasFault {
	body := &methods.UpdateServicePolicyBody{}
	svc, f := s.service(req.Id)
	if f == nil && !lists.Contains(policies, req.Policy) {
		f = vimfault.InvalidArgument("policy", "%q is not one of %s", req.Policy, strings.Join(policies, ", "))
	}
	if f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	svc.Policy = req.Policy
	s.publish()
	body.Res = &types.UpdateServicePolicyResponse{}
	return body
}
