package main

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/vimfault"
)

const xorgService = "xorg"

var servicePolicies = []string{"on", "off", "automatic"}

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
		service(xorgService, "X.Org Server", true, "on"),
	}
}

// serviceSystem is a host's HostServiceSystem (configManager.serviceSystem). Starting or restarting xorg is what
// applies the host's graphics configuration to its GPUs.
type serviceSystem struct {
	mo.HostServiceSystem

	host *hostState
}

func newServiceSystem(h *hostState) *serviceSystem {
	s := &serviceSystem{host: h}
	s.Self = types.ManagedObjectReference{Type: "HostServiceSystem", Value: "serviceSystem-" + h.Ref.Value}
	s.ServiceInfo = types.HostServiceInfo{Service: h.serviceList()}
	return s
}

func (h *hostState) serviceList() []types.HostService {
	list := make([]types.HostService, len(h.services))
	for i, s := range h.services {
		s.Ruleset = append([]string(nil), s.Ruleset...)
		list[i] = s
	}
	return list
}

func (h *hostState) service(id string) (*types.HostService, *vimfault.Fault) {
	for i := range h.services {
		if h.services[i].Key == id {
			return &h.services[i], nil
		}
	}
	keys := make([]string, len(h.services))
	for i, s := range h.services {
		keys[i] = s.Key
	}
	return nil, &vimfault.Fault{
		Fault: &types.NotFound{},
		Msg: fmt.Sprintf("The object or item referred to could not be found: service %q on host %s (services: %s)",
			id, h.Name, strings.Join(keys, ", ")),
	}
}

// setRunning starts or stops a service; (re)starting xorg applies the graphics configuration.
func (h *hostState) setRunning(id string, running, restart bool) *vimfault.Fault {
	s, f := h.service(id)
	if f != nil {
		return f
	}
	started := running && (restart || !s.Running)
	s.Running = running
	if id == xorgService && started {
		h.xorgRestarts++
		h.lab.logf("host %s: Xorg restarted (%d)", h.Name, h.xorgRestarts)
		h.ApplyConfig()
		h.publish()
	}
	h.publishServices()
	return nil
}

func (h *hostState) publishServices() {
	h.lab.update(h.svc, types.PropertyChange{Name: "serviceInfo", Val: types.HostServiceInfo{Service: h.serviceList()}})
	if host := h.lab.hostObject(h.Ref); host != nil {
		h.lab.update(host, types.PropertyChange{
			Name: "config.service", Val: &types.HostServiceInfo{Service: h.serviceList()},
		})
	}
}

func (s *serviceSystem) RestartService(req *types.RestartService) soap.HasFault {
	body := &methods.RestartServiceBody{}
	if f := s.host.setRunning(req.Id, true, true); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	body.Res = &types.RestartServiceResponse{}
	return body
}

func (s *serviceSystem) StartService(req *types.StartService) soap.HasFault {
	body := &methods.StartServiceBody{}
	if f := s.host.setRunning(req.Id, true, false); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	body.Res = &types.StartServiceResponse{}
	return body
}

func (s *serviceSystem) StopService(req *types.StopService) soap.HasFault {
	body := &methods.StopServiceBody{}
	if f := s.host.setRunning(req.Id, false, false); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	body.Res = &types.StopServiceResponse{}
	return body
}

func (s *serviceSystem) RefreshServices(req *types.RefreshServices) soap.HasFault {
	s.host.publishServices()
	return &methods.RefreshServicesBody{Res: &types.RefreshServicesResponse{}}
}

func (s *serviceSystem) UpdateServicePolicy(req *types.UpdateServicePolicy) soap.HasFault {
	body := &methods.UpdateServicePolicyBody{}
	svc, f := s.host.service(req.Id)
	if f == nil && !lists.Contains(servicePolicies, req.Policy) {
		f = vimfault.InvalidArgument("policy", "%q is not one of %s", req.Policy, strings.Join(servicePolicies, ", "))
	}
	if f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	svc.Policy = req.Policy
	s.host.publishServices()
	body.Res = &types.UpdateServicePolicyResponse{}
	return body
}
