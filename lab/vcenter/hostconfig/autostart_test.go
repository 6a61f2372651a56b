package hostconfig

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A start order taken by another VM moves that VM one place later; an any-time VM (-1) comes last; start and stop
// action none take a VM out of the sequence.
func TestAutoStartOrderCollisions(t *testing.T) {
	vm := func(n string) types.ManagedObjectReference {
		return types.ManagedObjectReference{Type: "VirtualMachine", Value: n}
	}
	entry := func(n string, order int32) types.AutoStartPowerInfo {
		return types.AutoStartPowerInfo{Key: vm(n), StartOrder: order, StartAction: "powerOn", StopAction: "none"}
	}
	var sequence []types.AutoStartPowerInfo
	for _, e := range []types.AutoStartPowerInfo{entry("a", 1), entry("b", 2), entry("any", -1), entry("c", 1)} {
		sequence = placeAutoStart(sequence, e)
	}
	var got []string
	for _, e := range sequence {
		got = append(got, e.Key.Value+":"+strconv.Itoa(int(e.StartOrder)))
	}
	if strings.Join(got, " ") != "c:1 a:2 b:3 any:-1" {
		t.Errorf("sequence: %v, want c first, a and b one place later, the any-time VM last", got)
	}
	removed := entry("a", -1)
	removed.StartAction = "none"
	if sequence = placeAutoStart(sequence, removed); len(sequence) != 3 || simulator.FindReference([]types.ManagedObjectReference{
		sequence[0].Key, sequence[1].Key, sequence[2].Key}, vm("a")) != nil {
		t.Errorf("start and stop action none keep the VM in the sequence: %v", sequence)
	}
}

// ReconfigureAutostart refuses a VM of another host and takes one of the host's, which then shows in the manager's
// config and in the host's config.autoStart.
func TestReconfigureAutostart(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	// The simulator places its VMs on hosts at random: the first two hosts that have any.
	var withVMs []mo.HostSystem
	for _, ref := range tl.Hosts {
		var h mo.HostSystem
		if err := tl.Client.RetrieveOne(ctx, ref, []string{"configManager.autoStartManager", "vm"}, &h); err != nil {
			t.Fatal(err)
		}
		if len(h.Vm) > 0 {
			withVMs = append(withVMs, h)
		}
	}
	var host, other mo.HostSystem
	if len(withVMs) > 1 {
		host, other = withVMs[0], withVMs[1]
	}
	if len(host.Vm) == 0 || len(other.Vm) == 0 {
		t.Fatalf("the simulator's hosts have no VMs: %v, %v", host.Vm, other.Vm)
	}
	reconfigure := func(vm types.ManagedObjectReference) error {
		_, err := methods.ReconfigureAutostart(ctx, tl.Client.Client, &types.ReconfigureAutostart{
			This: *host.ConfigManager.AutoStartManager, Spec: types.HostAutoStartManagerConfig{
				PowerInfo: []types.AutoStartPowerInfo{{Key: vm, StartOrder: 1, StartAction: "powerOn",
					StopAction: "systemDefault", WaitForHeartbeat: "systemDefault"}}}})
		return err
	}
	if err := reconfigure(other.Vm[0]); err == nil || !strings.Contains(err.Error(), "is not a VM of this host") {
		t.Errorf("a VM of another host: got %v, want InvalidArgument", err)
	}
	own := host.Vm[0]
	if err := reconfigure(own); err != nil {
		t.Fatal(err)
	}
	if err := tl.Client.RetrieveOne(ctx, host.Self, []string{"config.autoStart"}, &host); err != nil {
		t.Fatal(err)
	}
	if got := host.Config.AutoStart.PowerInfo; len(got) != 1 || got[0].Key != own {
		t.Errorf("config.autoStart.powerInfo %+v, want the host's VM", got)
	}
}
