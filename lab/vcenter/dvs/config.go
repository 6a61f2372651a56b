// Package dvs holds distributed switches as vCenter keeps them, over the simulator's objects: a switch's VMware
// configuration through CreateDVS_Task and ReconfigureDvs_Task (config.go), the port settings a switch and its port
// groups complete with vCenter's defaults (defaults.go), its host members, their uplink ports and FetchDVPorts
// (hosts.go), and the DistributedVirtualSwitchManager (manager.go). The simulator's tasks run under the package's
// hooks (Hooks); what it needs of the lab is its Lab interface.
package dvs

import (
	"net/http"
	"reflect"
	"strconv"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// A distributed switch's configuration through CreateDVS_Task and ReconfigureDvs_Task (vSphere Web Services API,
// VMwareDVSConfigSpec, VMwareDVSConfigInfo, VMwareDVSPvlanConfigSpec; developer.broadcom.com/xapis/
// vsphere-web-services-api/latest/). The simulator copies only the generic part of a create spec and applies none
// of a reconfigure spec but its hosts. Here:
//   - a new switch takes the spec's MTU, discovery protocol, LACP API version, multicast filtering mode and private
//     VLANs, with vCenter's defaults where the spec has none (MTU 1500, CDP listening, multipleLag, legacyFiltering)
//     and configVersion "1";
//   - a reconfiguration whose configVersion is not the switch's is refused with ConcurrentAccess, as vCenter does
//     for a change made since the client read the switch; otherwise every field the spec sets replaces the
//     switch's (name, description, contact, MTU, discovery protocol, uplink names, port settings, standalone ports,
//     LACP API version, multicast mode, IPFIX), private VLAN entries are added, edited or removed (an entry to add
//     that exists, or to edit or remove that does not, is InvalidArgument), and configVersion goes up by one.
// Not confirmed: the exact starting configVersion and the default discovery protocol of a switch created through the
// API rather than the vSphere Client.

// Lab is what the distributed switches need of the lab.
type Lab interface {
	// Inflight is the decoded request being served (CreateDVS_Task, ReconfigureDvs_Task), which the task hooks
	// read their arguments from.
	Inflight() interface{}
	// TaskFailed ends a task with a fault and the message vCenter words it with.
	TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault)
	// VMNetworks is the networks a VM of the inventory uses, nil for a VM the lab does not know: a host leaves a
	// switch only while none of its VMs uses one of the switch's port groups.
	VMNetworks(vm types.ManagedObjectReference) []types.ManagedObjectReference
	Logf(format string, args ...interface{})
}

// RequestsRead are the requests whose arguments the package reads through Lab.Inflight while it serves them.
var RequestsRead = []string{"CreateDVS_Task", "ReconfigureDvs_Task"}

// TaskRunner runs a task of the simulator: its own work, which a hook runs, replaces or surrounds.
type TaskRunner = func(*simulator.Task) (types.AnyType, types.BaseMethodFault)

// Switches serves the lab's distributed switches.
type Switches struct{ lab Lab }

func New(lab Lab) *Switches { return &Switches{lab: lab} }

// Hooks are the task hooks of the switches, by the task's description id: each runs in place of the simulator's
// task (original) and calls it.
func (s *Switches) Hooks() map[string]func(*simulator.Task, TaskRunner) (types.AnyType, types.BaseMethodFault) {
	return map[string]func(*simulator.Task, TaskRunner) (types.AnyType, types.BaseMethodFault){
		"Folder.createDVS": s.createdDVS,
		"VmwareDistributedVirtualSwitch.addDVPortgroup":      s.addedDVPortgroups,
		"DistributedVirtualSwitch.addDVPortgroup":            s.addedDVPortgroups,
		"VmwareDistributedVirtualSwitch.reconfigureDvs":      s.reconfigureDvs,
		"DistributedVirtualSwitch.reconfigureDvs":            s.reconfigureDvs,
		"DistributedVirtualPortgroup.reconfigureDvPortgroup": s.reconfiguredDVPortgroup,
	}
}

// Serve answers the switch methods the lab implements itself (FetchDVPorts), and says whether it did.
func (s *Switches) Serve(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	return s.serveFetchDVPorts(w, call, body)
}

// completeCreatedDVSConfig applies the VMware-specific part of the create spec the lab saw.
func (s *Switches) completeCreatedDVSConfig(dvs *simulator.DistributedVirtualSwitch) {
	info, ok := dvs.Config.(*types.VMwareDVSConfigInfo)
	if !ok {
		return
	}
	info.ConfigVersion = "1"
	info.MaxMtu, info.LacpApiVersion = 1500, string(types.VMwareDvsLacpApiVersionMultipleLag)
	info.MulticastFilteringMode = string(types.VMwareDvsMulticastFilteringModeLegacyFiltering)
	info.LinkDiscoveryProtocolConfig = &types.LinkDiscoveryProtocolConfig{Protocol: "cdp", Operation: "listen"}
	if req, ok := s.lab.Inflight().(*types.CreateDVS_Task); ok {
		if spec, ok := req.Spec.ConfigSpec.(*types.VMwareDVSConfigSpec); ok {
			applyVMwareDVSSpec(info, spec)
			_ = applyPvlanSpecs(info, spec.PvlanConfigSpec)
		}
	}
}

func applyVMwareDVSSpec(info *types.VMwareDVSConfigInfo, spec *types.VMwareDVSConfigSpec) {
	if spec.MaxMtu > 0 {
		info.MaxMtu = spec.MaxMtu
	}
	if spec.LinkDiscoveryProtocolConfig != nil {
		info.LinkDiscoveryProtocolConfig = spec.LinkDiscoveryProtocolConfig
	}
	if spec.IpfixConfig != nil {
		info.IpfixConfig = spec.IpfixConfig
	}
	if spec.LacpApiVersion != "" {
		info.LacpApiVersion = spec.LacpApiVersion
	}
	if spec.MulticastFilteringMode != "" {
		info.MulticastFilteringMode = spec.MulticastFilteringMode
	}
}

func applyPvlanSpecs(info *types.VMwareDVSConfigInfo, specs []types.VMwareDVSPvlanConfigSpec) *vimfault.Fault {
	entries := append([]types.VMwareDVSPvlanMapEntry(nil), info.PvlanConfig...)
	for _, spec := range specs {
		index := -1
		for i, entry := range entries {
			if entry.SecondaryVlanId == spec.PvlanEntry.SecondaryVlanId {
				index = i
			}
		}
		switch {
		case spec.Operation == string(types.ConfigSpecOperationAdd) && index < 0:
			entries = append(entries, spec.PvlanEntry)
		case spec.Operation == string(types.ConfigSpecOperationEdit) && index >= 0:
			entries[index] = spec.PvlanEntry
		case spec.Operation == string(types.ConfigSpecOperationRemove) && index >= 0:
			entries = append(entries[:index], entries[index+1:]...)
		default:
			return vimfault.InvalidArgument("pvlanConfigSpec", "cannot %s private VLAN %d", spec.Operation,
				spec.PvlanEntry.SecondaryVlanId)
		}
	}
	info.PvlanConfig = entries
	return nil
}

// checkDVSConfigVersion refuses a reconfiguration made against an older configuration of the switch.
func checkDVSConfigVersion(dvs *simulator.DistributedVirtualSwitch, spec *types.DVSConfigSpec) *vimfault.Fault {
	current := dvs.Config.GetDVSConfigInfo().ConfigVersion
	if spec.ConfigVersion != "" && current != "" && spec.ConfigVersion != current {
		return &vimfault.Fault{Fault: &types.ConcurrentAccess{}, Msg: "Cannot complete operation due to concurrent " +
			"modification by another operation."}
	}
	return nil
}

// applyDVSConfig applies the non-host part of a reconfiguration and counts the configuration version up.
func (s *Switches) applyDVSConfig(dvs *simulator.DistributedVirtualSwitch, req *types.ReconfigureDvs_Task) *vimfault.Fault {
	spec := req.Spec.GetDVSConfigSpec()
	info, isVMware := dvs.Config.(*types.VMwareDVSConfigInfo)
	if vmwareSpec, ok := req.Spec.(*types.VMwareDVSConfigSpec); ok && isVMware {
		if f := applyPvlanSpecs(info, vmwareSpec.PvlanConfigSpec); f != nil {
			return f
		}
		applyVMwareDVSSpec(info, vmwareSpec)
	}
	config := dvs.Config.GetDVSConfigInfo()
	if spec.Name != "" && spec.Name != dvs.Name {
		name := simobj.EscapeName(spec.Name)
		config.Name, dvs.Summary.Name = name, name
		simulator.Map.Update(dvs, []types.PropertyChange{{Name: "name", Val: name}})
	}
	if spec.Description != "" {
		config.Description, dvs.Summary.Description = spec.Description, spec.Description
	}
	if spec.Contact != nil {
		config.Contact = *spec.Contact
	}
	if spec.UplinkPortPolicy != nil {
		config.UplinkPortPolicy = spec.UplinkPortPolicy
	}
	if spec.DefaultPortConfig != nil {
		if config.DefaultPortConfig != nil {
			mergeSet(reflect.ValueOf(config.DefaultPortConfig), reflect.ValueOf(spec.DefaultPortConfig))
		} else {
			config.DefaultPortConfig = spec.DefaultPortConfig
		}
		config.DefaultPortConfig = completePortSetting(config.DefaultPortConfig, false, uplinkNames(dvs))
	}
	if spec.NumStandalonePorts > 0 {
		config.NumStandalonePorts = spec.NumStandalonePorts
	}
	if spec.DefaultProxySwitchMaxNumPorts > 0 {
		config.DefaultProxySwitchMaxNumPorts = spec.DefaultProxySwitchMaxNumPorts
	}
	if spec.Policy != nil {
		config.Policy = spec.Policy
	}
	if version, err := strconv.Atoi(config.ConfigVersion); err == nil {
		config.ConfigVersion = strconv.Itoa(version + 1)
	}
	return nil
}

// mergeSet copies into dst what src sets, field by field: a reconfiguration changes only the settings it states
// (a policy given with one of its values set changes that value). Both are pointers to the same struct type.
func mergeSet(dst, src reflect.Value) {
	if dst.Kind() == reflect.Interface {
		dst = dst.Elem()
	}
	if src.Kind() == reflect.Interface {
		src = src.Elem()
	}
	if dst.Kind() != reflect.Ptr || src.Kind() != reflect.Ptr || dst.IsNil() || src.IsNil() ||
		dst.Type() != src.Type() || dst.Elem().Kind() != reflect.Struct {
		return
	}
	d, s := dst.Elem(), src.Elem()
	for i := 0; i < s.NumField(); i++ {
		from, to := s.Field(i), d.Field(i)
		if !to.CanSet() {
			continue
		}
		switch from.Kind() {
		case reflect.Ptr, reflect.Interface:
			if from.IsNil() {
				continue
			}
			if !to.IsNil() && from.Elem().Kind() != reflect.Struct || to.IsNil() {
				to.Set(from)
				continue
			}
			if from.Kind() == reflect.Ptr && from.Elem().Kind() == reflect.Struct {
				mergeSet(to, from)
			} else {
				to.Set(from)
			}
		case reflect.Struct:
			if from.Type().Name() == "InheritablePolicy" || from.Type().Name() == "DynamicData" {
				continue
			}
			to.Set(from)
		default:
			if !from.IsZero() {
				to.Set(from)
			}
		}
	}
}
