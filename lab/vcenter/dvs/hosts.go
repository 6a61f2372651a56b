package dvs

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"vcsim/lists"
	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// Hosts of a distributed switch (vSphere Web Services API, DistributedVirtualSwitch.ReconfigureDvs_Task with
// DistributedVirtualSwitchHostMemberConfigSpec, DVSConfigInfo.host, FetchDVPorts with
// DistributedVirtualSwitchPortCriteria; developer.broadcom.com/xapis/vsphere-web-services-api/latest/):
//   - a host that joins (operation add) gets one uplink port per uplink name on the switch's uplink port group
//     (port name "Uplink 1"..; proxy host the host) and an entry in config.host listing them, with no physical NICs
//     yet; one that leaves (remove) takes its entry, ports and the switch's port groups with it, refused with
//     ResourceInUse while one of its VMs uses one of them;
//   - edit sets a member's physical NICs (backing.pnicSpec): each NIC must be one of the host's and each uplink port
//     one of the host's on this switch, else the task fails with InvalidArgument and nothing changes;
//   - FetchDVPorts answers the switch's ports filtered by the criteria's port group keys, port keys, hosts (a port's
//     proxy host) and uplinkPort.
//
// Not modelled: a spec that mixes additions, edits and removals (refused with NotSupported), the criteria's connected,
// active and inside (ignored), LAGs, and ports of VM port groups tied to a host (they have no proxy host here).

// reconfigureDvs wraps the simulator's ReconfigureDvs_Task, which refuses edit and keeps no config.host.
func (s *Switches) reconfigureDvs(t *simulator.Task, original TaskRunner) (types.AnyType, types.BaseMethodFault) {
	req, ok := s.lab.Inflight().(*types.ReconfigureDvs_Task)
	dvs, isDVS := simulator.Map.Get(*t.Info.Entity).(*simulator.DistributedVirtualSwitch)
	if !ok || !isDVS || req.This != dvs.Self {
		return original(t)
	}
	if f := checkDVSConfigVersion(dvs, req.Spec.GetDVSConfigSpec()); f != nil {
		return s.lab.TaskFailed(t, f)
	}
	result, fault := s.reconfigureDvsHosts(t, original, dvs, req)
	if fault == nil {
		if f := s.applyDVSConfig(dvs, req); f != nil {
			return s.lab.TaskFailed(t, f)
		}
	}
	return result, fault
}

// reconfigureDvsHosts applies the host part of a reconfiguration.
func (s *Switches) reconfigureDvsHosts(t *simulator.Task, original TaskRunner, dvs *simulator.DistributedVirtualSwitch,
	req *types.ReconfigureDvs_Task) (types.AnyType, types.BaseMethodFault) {
	ops := map[string][]types.DistributedVirtualSwitchHostMemberConfigSpec{}
	for _, member := range req.Spec.GetDVSConfigSpec().Host {
		ops[member.Operation] = append(ops[member.Operation], member)
	}
	if len(ops) > 1 {
		return s.lab.TaskFailed(t, &vimfault.Fault{Fault: &types.NotSupported{},
			Msg: "The lab applies host additions, edits and removals in separate reconfigurations."})
	}
	syncDVSHosts(dvs)
	if adds := ops[string(types.ConfigSpecOperationAdd)]; len(adds) > 0 || len(ops) == 0 {
		result, fault := original(t)
		if fault == nil {
			syncDVSHosts(dvs)
		}
		return result, fault
	}
	for _, remove := range ops[string(types.ConfigSpecOperationRemove)] {
		if f := s.removeDVSHost(dvs, remove.Host); f != nil {
			return s.lab.TaskFailed(t, f)
		}
	}
	edits := ops[string(types.ConfigSpecOperationEdit)]
	for _, edit := range edits {
		if f := checkHostEdit(dvs, edit); f != nil {
			return s.lab.TaskFailed(t, f)
		}
	}
	for _, edit := range edits {
		member := dvsHostMember(dvs, edit.Host)
		if backing, ok := edit.Backing.(*types.DistributedVirtualSwitchHostMemberPnicBacking); ok {
			member.Config.Backing = backing
		}
		if edit.MaxProxySwitchPorts > 0 {
			member.Config.MaxProxySwitchPorts = edit.MaxProxySwitchPorts
		}
	}
	return nil, nil
}

// removeDVSHost takes a host off the switch: ResourceInUse while one of its VMs uses a port group of the switch.
// The simulator's own removal type-asserts the host's VMs and so cannot see the lab's.
func (s *Switches) removeDVSHost(dvs *simulator.DistributedVirtualSwitch, ref types.ManagedObjectReference) *vimfault.Fault {
	host, _ := simulator.Map.Get(ref).(*simulator.HostSystem)
	if host == nil || simulator.FindReference(dvs.Summary.HostMember, ref) == nil {
		return vimfault.InvalidArgument("host", "%s is not a member of distributed switch %s", ref.Value, dvs.Name)
	}
	for _, vmRef := range host.Vm {
		if networks := s.lab.VMNetworks(vmRef); networks != nil {
			if pg := simulator.FindReference(networks, dvs.Portgroup...); pg != nil {
				return &vimfault.Fault{Fault: &types.ResourceInUse{Type: pg.Type, Name: pg.Value},
					Msg: fmt.Sprintf("The resource '%s' is in use.", pg.Value)}
			}
		}
	}
	simulator.RemoveReference(&dvs.Summary.HostMember, ref)
	for _, pgRef := range dvs.Portgroup {
		if pg, ok := simulator.Map.Get(pgRef).(*simulator.DistributedVirtualPortgroup); ok {
			simulator.RemoveReference(&pg.Host, ref)
		}
		simulator.RemoveReference(&host.Network, pgRef)
	}
	syncDVSHosts(dvs)
	return nil
}

func uplinkPortgroup(dvs *simulator.DistributedVirtualSwitch) *simulator.DistributedVirtualPortgroup {
	config := dvs.Config.GetDVSConfigInfo()
	if len(config.UplinkPortgroup) == 0 {
		return nil
	}
	pg, _ := simulator.Map.Get(config.UplinkPortgroup[0]).(*simulator.DistributedVirtualPortgroup)
	return pg
}

func uplinkNames(dvs *simulator.DistributedVirtualSwitch) []string {
	if policy, ok := dvs.Config.GetDVSConfigInfo().UplinkPortPolicy.(*types.DVSNameArrayUplinkPortPolicy); ok {
		return policy.UplinkPortName
	}
	return nil
}

func dvsHostMember(dvs *simulator.DistributedVirtualSwitch,
	host types.ManagedObjectReference) *types.DistributedVirtualSwitchHostMember {
	config := dvs.Config.GetDVSConfigInfo()
	for i := range config.Host {
		if config.Host[i].Config.Host != nil && *config.Host[i].Config.Host == host {
			return &config.Host[i]
		}
	}
	return nil
}

// syncDVSHosts gives every member host its config.host entry and uplink ports, and drops those of hosts that left.
func syncDVSHosts(dvs *simulator.DistributedVirtualSwitch) {
	config := dvs.Config.GetDVSConfigInfo()
	uplinks := uplinkPortgroup(dvs)
	kept := config.Host[:0]
	for _, member := range config.Host {
		if member.Config.Host != nil && simulator.FindReference(dvs.Summary.HostMember, *member.Config.Host) != nil {
			kept = append(kept, member)
		} else if uplinks != nil {
			for _, key := range member.UplinkPortKey {
				removeString(&uplinks.PortKeys, key)
			}
		}
	}
	config.Host = kept
	for _, ref := range dvs.Summary.HostMember {
		if dvsHostMember(dvs, ref) != nil {
			continue
		}
		host := ref
		member := types.DistributedVirtualSwitchHostMember{Status: "up", ProductInfo: dvs.Summary.ProductInfo,
			Config: types.DistributedVirtualSwitchHostMemberConfigInfo{Host: &host, MaxProxySwitchPorts: 512,
				Backing: &types.DistributedVirtualSwitchHostMemberPnicBacking{}}}
		if uplinks != nil {
			next := nextPortKey(dvs)
			for range uplinkNames(dvs) {
				key := strconv.Itoa(next)
				next++
				member.UplinkPortKey = append(member.UplinkPortKey, key)
				uplinks.PortKeys = append(uplinks.PortKeys, key)
			}
		}
		config.Host = append(config.Host, member)
	}
	if uplinks != nil {
		uplinks.Config.NumPorts = int32(len(uplinks.PortKeys))
	}
}

// nextPortKey is a port key no port of the switch has yet.
func nextPortKey(dvs *simulator.DistributedVirtualSwitch) int {
	next := 0
	for _, ref := range dvs.Portgroup {
		if pg, ok := simulator.Map.Get(ref).(*simulator.DistributedVirtualPortgroup); ok {
			for _, key := range pg.PortKeys {
				if n, err := strconv.Atoi(key); err == nil && n >= next {
					next = n + 1
				}
			}
		}
	}
	return next
}

func removeString(list *[]string, value string) {
	kept := (*list)[:0]
	for _, item := range *list {
		if item != value {
			kept = append(kept, item)
		}
	}
	*list = kept
}

func checkHostEdit(dvs *simulator.DistributedVirtualSwitch, edit types.DistributedVirtualSwitchHostMemberConfigSpec) *vimfault.Fault {
	member := dvsHostMember(dvs, edit.Host)
	host, _ := simulator.Map.Get(edit.Host).(*simulator.HostSystem)
	if member == nil || host == nil {
		return vimfault.InvalidArgument("host", "%s is not a member of distributed switch %s", edit.Host.Value, dvs.Name)
	}
	backing, ok := edit.Backing.(*types.DistributedVirtualSwitchHostMemberPnicBacking)
	if !ok {
		return nil
	}
	nics := map[string]bool{}
	if host.Config != nil && host.Config.Network != nil {
		for _, pnic := range host.Config.Network.Pnic {
			nics[pnic.Device] = true
		}
	}
	for _, spec := range backing.PnicSpec {
		if !nics[spec.PnicDevice] {
			return vimfault.InvalidArgument("backing.pnicSpec.pnicDevice", "host %s has no physical NIC %s", host.Name,
				spec.PnicDevice)
		}
		if spec.UplinkPortKey != "" && !lists.Contains(member.UplinkPortKey, spec.UplinkPortKey) {
			return vimfault.InvalidArgument("backing.pnicSpec.uplinkPortKey", "port %s is not an uplink port of host %s on %s",
				spec.UplinkPortKey, host.Name, dvs.Name)
		}
	}
	return nil
}

// serveFetchDVPorts answers FetchDVPorts with the switch's ports that match the criteria.
func (s *Switches) serveFetchDVPorts(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	if call.Method != "FetchDVPorts" {
		return false
	}
	dvs, _ := simulator.Map.Get(call.This).(*simulator.DistributedVirtualSwitch)
	method, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if dvs == nil || err != nil {
		return false
	}
	req, ok := method.Body.(*types.FetchDVPorts)
	if !ok {
		return false
	}
	answer, err := xml.Marshal(struct {
		XMLName   xml.Name                       `xml:"urn:vim25 FetchDVPortsResponse"`
		Returnval []types.DistributedVirtualPort `xml:"returnval,omitempty"`
	}{Returnval: dvsPorts(dvs, req.Criteria)})
	if err != nil {
		soaphttp.WriteSystemError(w, err.Error())
		return true
	}
	soaphttp.WriteResponse(w, string(answer))
	return true
}

func dvsPorts(dvs *simulator.DistributedVirtualSwitch,
	criteria *types.DistributedVirtualSwitchPortCriteria) []types.DistributedVirtualPort {
	uplinkOwner, uplinkName := map[string]types.ManagedObjectReference{}, map[string]string{}
	names := uplinkNames(dvs)
	for _, member := range dvs.Config.GetDVSConfigInfo().Host {
		for i, key := range member.UplinkPortKey {
			uplinkOwner[key] = *member.Config.Host
			if i < len(names) {
				uplinkName[key] = names[i]
			}
		}
	}
	var ports []types.DistributedVirtualPort
	for _, ref := range dvs.Portgroup {
		pg, ok := simulator.Map.Get(ref).(*simulator.DistributedVirtualPortgroup)
		if !ok {
			continue
		}
		uplink := pg.Config.Uplink != nil && *pg.Config.Uplink
		for _, key := range pg.PortKeys {
			port := types.DistributedVirtualPort{Key: key, DvsUuid: dvs.Uuid, PortgroupKey: pg.Key,
				Config: types.DVPortConfigInfo{Setting: pg.Config.DefaultPortConfig, Name: uplinkName[key]}}
			if owner, ok := uplinkOwner[key]; ok {
				port.ProxyHost = &owner
			}
			if portMatches(port, uplink, criteria) {
				ports = append(ports, port)
			}
		}
	}
	return ports
}

func portMatches(port types.DistributedVirtualPort, uplink bool, criteria *types.DistributedVirtualSwitchPortCriteria) bool {
	if criteria == nil {
		return true
	}
	if criteria.UplinkPort != nil && *criteria.UplinkPort != uplink {
		return false
	}
	if len(criteria.PortgroupKey) > 0 && !lists.Contains(criteria.PortgroupKey, port.PortgroupKey) {
		return false
	}
	if len(criteria.PortKey) > 0 && !lists.Contains(criteria.PortKey, port.Key) {
		return false
	}
	if len(criteria.Host) > 0 && (port.ProxyHost == nil || simulator.FindReference(criteria.Host, *port.ProxyHost) == nil) {
		return false
	}
	return true
}
