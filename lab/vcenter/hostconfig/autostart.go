package hostconfig

import (
	"sort"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/vimfault"
)

// AutoStartManager is a host's HostAutoStartManager (configManager.AutoStartManager): the order in which the host
// starts and stops its VMs when it boots or shuts down (vSphere Web Services API, HostAutoStartManager,
// HostAutoStartManagerConfig, AutoStartDefaults, AutoStartPowerInfo). Its config is also the host's
// config.autoStart. A host starts with ESXi's defaults as govmomi recorded them from a host (esx.HostConfigInfo:
// enabled unset, 120 s delays, stop action "PowerOff", no heartbeat wait) and no VM in the sequence.
type AutoStartManager struct {
	mo.HostAutoStartManager
	host types.ManagedObjectReference
}

// NewAutoStartManager makes a host's auto-start manager and points its configManager.autoStartManager at it.
func NewAutoStartManager(obj *simulator.HostSystem) *AutoStartManager {
	m := &AutoStartManager{host: obj.Self}
	m.Self = types.ManagedObjectReference{Type: "HostAutoStartManager", Value: "AutoStartManager-" + simobj.Number(obj.Self)}
	m.Config = types.HostAutoStartManagerConfig{Defaults: &types.AutoStartDefaults{
		StartDelay: 120, StopDelay: 120, WaitForHeartbeat: types.NewBool(false), StopAction: "PowerOff"}}
	config := m.Config
	obj.Config.AutoStart = &config
	ref := m.Self
	obj.ConfigManager.AutoStartManager = &ref
	return m
}

var (
	autoStartActions = []string{"none", "powerOn"}
	autoStopActions  = []string{"none", "systemDefault", "powerOff", "suspend", "guestShutdown"}
	// The system default stop action has no systemDefault of its own.
	defaultStopActions = []string{"none", "powerOff", "suspend", "guestShutdown"}
	heartbeatSettings  = []string{"yes", "no", "systemDefault"}
)

// ReconfigureAutostart applies an incremental change: the defaults' fields that are set replace the stored ones;
// each powerInfo entry replaces its VM's entry, and an entry whose start and stop actions are both "none" takes the
// VM out of the sequence. A start order taken by another VM moves that VM (and any it then collides with) one
// place later. A VM that is not on the host, an action outside the API's values or a start order below -1 or 0
// fails with InvalidArgument and changes nothing.
func (m *AutoStartManager) ReconfigureAutostart(ctx *simulator.Context, req *types.ReconfigureAutostart) soap.HasFault {
	body := &methods.ReconfigureAutostartBody{}
	host, _ := ctx.Map.Get(m.host).(*simulator.HostSystem)
	if host == nil {
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: m.host})
		return body
	}
	if fault := validateAutoStart(req.Spec, host.Vm); fault != nil {
		body.Fault_ = fault.SOAP()
		return body
	}
	config := types.HostAutoStartManagerConfig{Defaults: mergeAutoStartDefaults(m.Config.Defaults, req.Spec.Defaults),
		PowerInfo: append([]types.AutoStartPowerInfo{}, m.Config.PowerInfo...)}
	for _, info := range req.Spec.PowerInfo {
		config.PowerInfo = placeAutoStart(config.PowerInfo, info)
	}
	ctx.Map.Update(m, []types.PropertyChange{{Name: "config", Val: config}})
	hostCopy := config
	ctx.WithLock(host, func() {
		ctx.Map.Update(host, []types.PropertyChange{{Name: "config.autoStart", Val: &hostCopy}})
	})
	body.Res = &types.ReconfigureAutostartResponse{}
	return body
}

func validateAutoStart(spec types.HostAutoStartManagerConfig, vms []types.ManagedObjectReference) *vimfault.Fault {
	if d := spec.Defaults; d != nil && d.StopAction != "" && !oneOf(d.StopAction, defaultStopActions) {
		return vimfault.InvalidArgument("defaults.stopAction", "%q is not one of %s", d.StopAction,
			strings.Join(defaultStopActions, ", "))
	}
	for _, info := range spec.PowerInfo {
		switch {
		case simulator.FindReference(vms, info.Key) == nil:
			return vimfault.InvalidArgument("powerInfo.key", "%s is not a VM of this host", info.Key.Value)
		case !oneOf(info.StartAction, autoStartActions):
			return vimfault.InvalidArgument("powerInfo.startAction", "%q is not one of %s", info.StartAction,
				strings.Join(autoStartActions, ", "))
		case !oneOf(info.StopAction, autoStopActions):
			return vimfault.InvalidArgument("powerInfo.stopAction", "%q is not one of %s", info.StopAction,
				strings.Join(autoStopActions, ", "))
		case !oneOf(string(info.WaitForHeartbeat), heartbeatSettings):
			return vimfault.InvalidArgument("powerInfo.waitForHeartbeat", "%q is not one of %s",
				info.WaitForHeartbeat, strings.Join(heartbeatSettings, ", "))
		case info.StartOrder == 0 || info.StartOrder < -1:
			return vimfault.InvalidArgument("powerInfo.startOrder", "%d: a start order is -1 or from 1 on", info.StartOrder)
		}
	}
	return nil
}

func oneOf(value string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(value, a) {
			return true
		}
	}
	return false
}

// mergeAutoStartDefaults applies the fields of a change that are set. The SOAP types cannot tell a delay of 0 from
// one left out, so a delay of 0 leaves the stored delay as it is.
func mergeAutoStartDefaults(stored, change *types.AutoStartDefaults) *types.AutoStartDefaults {
	merged := types.AutoStartDefaults{}
	if stored != nil {
		merged = *stored
	}
	if change == nil {
		return &merged
	}
	if change.Enabled != nil {
		merged.Enabled = types.NewBool(*change.Enabled)
	}
	if change.WaitForHeartbeat != nil {
		merged.WaitForHeartbeat = types.NewBool(*change.WaitForHeartbeat)
	}
	if change.StartDelay != 0 {
		merged.StartDelay = change.StartDelay
	}
	if change.StopDelay != 0 {
		merged.StopDelay = change.StopDelay
	}
	if change.StopAction != "" {
		merged.StopAction = change.StopAction
	}
	return &merged
}

// placeAutoStart puts one VM's entry into the sequence, ordered by start order with the "any time" entries (-1)
// last.
func placeAutoStart(sequence []types.AutoStartPowerInfo, info types.AutoStartPowerInfo) []types.AutoStartPowerInfo {
	kept := sequence[:0]
	for _, existing := range sequence {
		if existing.Key != info.Key {
			kept = append(kept, existing)
		}
	}
	sequence = kept
	if strings.EqualFold(info.StartAction, "none") && strings.EqualFold(info.StopAction, "none") {
		return sequence
	}
	moved := map[int]bool{}
	for order := info.StartOrder; order > 0; order++ {
		i := indexOfStartOrder(sequence, order, moved)
		if i < 0 {
			break
		}
		sequence[i].StartOrder, moved[i] = order+1, true
	}
	sequence = append(sequence, info)
	sort.SliceStable(sequence, func(i, j int) bool {
		a, b := sequence[i].StartOrder, sequence[j].StartOrder
		return a != -1 && (b == -1 || a < b)
	})
	return sequence
}

func indexOfStartOrder(sequence []types.AutoStartPowerInfo, order int32, moved map[int]bool) int {
	for i, info := range sequence {
		if info.StartOrder == order && !moved[i] {
			return i
		}
	}
	return -1
}
