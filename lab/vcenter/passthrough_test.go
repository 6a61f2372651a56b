package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
)

const passthroughTopology = `{"datacenters": [{"name": "dc",
	"clusters": [{"name": "hpc", "hosts": [
		{"name": "esxi-31", "gpus": [{"model": "A100-40", "count": 4}], "nvlink": [[0, 1], [2, 3]]},
		{"name": "esxi-32", "gpus": [{"model": "A100-40", "count": 1}]}]}],
	"vms": [{"name": "pt-1", "host": "esxi-31", "memory_mb": 65536}, {"name": "pt-2", "host": "esxi-31"}]}]}`

func startPassthroughLab(t *testing.T) (*testLab, *govmomi.Client) {
	t.Helper()
	return startConnectedLab(t, passthroughTopology)
}

// startConnectedLab serves a lab of the topology for one test, with a logged-in client.
func startConnectedLab(t *testing.T, topology string) (*testLab, *govmomi.Client) {
	t.Helper()
	tl := startLabWith(t, topology)
	c := tl.client(t)
	return tl, c
}

func setPassthru(ctx context.Context, c *govmomi.Client, h *hostState, enable bool, ids ...string) error {
	obj := h.lab.hostObject(h.Ref)
	config := make([]types.BaseHostPciPassthruConfig, len(ids))
	for i, id := range ids {
		config[i] = &types.HostPciPassthruConfig{Id: id, PassthruEnabled: enable}
	}
	_, err := methods.UpdatePassthruConfig(ctx, c, &types.UpdatePassthruConfig{
		This: *obj.ConfigManager.PciPassthruSystem, Config: config})
	return err
}

func waitTask(task *object.Task, err error) error {
	if err != nil {
		return err
	}
	return task.Wait(context.Background())
}

func staticGPU(id string) types.BaseVirtualDeviceConfigSpec {
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd,
		Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Backing: &types.VirtualPCIPassthroughDeviceBackingInfo{Id: id}}}}
}

func dynamicGPU(deviceID int32) types.BaseVirtualDeviceConfigSpec {
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd,
		Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
			Backing: &types.VirtualPCIPassthroughDynamicBackingInfo{AllowedDevice: []types.VirtualPCIPassthroughAllowedDevice{
				{VendorId: gpu.NVIDIAVendorID, DeviceId: deviceID}}}}}}
}

func mmio(sizeGB string) []types.BaseOptionValue {
	return []types.BaseOptionValue{&types.OptionValue{Key: gpu.MMIOOption, Value: "TRUE"},
		&types.OptionValue{Key: gpu.MMIOSizeOption, Value: sizeGB}}
}

func expectFault(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: want a fault with %q, got %v", what, want, err)
	}
}

// The hosts' passthrough systems (package pcipassthru) are wired to the lab: the lab's GPUs check a switch (with the
// lab's VM names), and /lab/state and the GPU model read the devices' passthrough state.
func TestPassthroughHostWiring(t *testing.T) {
	tl, c := startPassthroughLab(t)
	ctx := context.Background()
	h := tl.hosts[0]
	h.GPUs[0].VGPUs = []*gpu.Slot{{VM: tl.vms[1], Profile: "grid_a100-4c", GPU: h.GPUs[0], At: -1}}
	expectFault(t, "GPU running vGPUs", setPassthru(ctx, c, h, true, h.GPUs[0].PciID),
		"is in use by vGPU virtual machines (pt-2)")
	h.GPUs[0].VGPUs = nil
	if err := setPassthru(ctx, c, h, true, h.GPUs[0].PciID, h.GPUs[1].PciID); err != nil {
		t.Fatal(err)
	}
	gpus := tl.state(t).Hosts[0].GPUs
	if !gpus[0].PassthruActive || !gpus[1].PassthruActive || gpus[2].PassthruEnabled {
		t.Fatalf("passthrough active at once on the first two GPUs only: %+v", gpus)
	}
	if _, why := gpu.LoadsOf(h.Host)[0].Fit("grid_a100-4c"); !strings.Contains(why, "passed through whole") {
		t.Errorf("a passthrough GPU takes no vGPU, got %q", why)
	}
}

func TestPassthroughPowerOnRules(t *testing.T) {
	tl, c := startPassthroughLab(t)
	ctx := context.Background()
	h := tl.hosts[0]
	if err := setPassthru(ctx, c, h, true, h.GPUs[0].PciID, h.GPUs[1].PciID); err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	expectFault(t, "static backing of a device not enabled", waitTask(vm.Reconfigure(ctx,
		types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{staticGPU(h.GPUs[2].PciID)}})),
		"is not available for passthrough")
	if err := waitTask(vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{
		staticGPU(h.GPUs[0].PciID), dynamicGPU(int32(h.GPUs[0].Model.DeviceID))}})); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		spec types.VirtualMachineConfigSpec
		want string
	}{
		{types.VirtualMachineConfigSpec{}, "memory reservation (sched.mem.min) should be equal to memsize(65536)"},
		{types.VirtualMachineConfigSpec{MemoryReservationLockedToMax: types.NewBool(true)}, "BARs above 16 GB need EFI"},
		{types.VirtualMachineConfigSpec{Firmware: "efi"}, "pciPassthru.use64bitMMIO is not TRUE"},
		{types.VirtualMachineConfigSpec{ExtraConfig: mmio("64")}, "needs 128 GB of 64-bit MMIO space"},
	}
	for _, step := range steps {
		if err := waitTask(vm.Reconfigure(ctx, step.spec)); err != nil {
			t.Fatal(err)
		}
		expectFault(t, "power-on", waitTask(vm.PowerOn(ctx)), step.want)
	}
	if err := waitTask(vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: mmio("128")})); err != nil {
		t.Fatal(err)
	}
	if err := waitTask(vm.PowerOn(ctx)); err != nil {
		t.Fatal(err)
	}
	s := tl.state(t)
	held := s.VMs[0].Passthrough
	if len(held) != 2 || held[0].Backing != "static" || *held[0].GPU != h.GPUs[0].PciID ||
		held[1].Backing != "dynamic" || *held[1].GPU != h.GPUs[1].PciID {
		t.Fatalf("the VM holds GPUs 0 and 1: %+v", held)
	}
	if vmName := s.Hosts[0].GPUs[1].PassthroughVM; vmName == nil || *vmName != "pt-1" {
		t.Fatalf("the host shows the GPU's holder: %v", vmName)
	}
	expectFault(t, "remove while running", waitTask(vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationRemove,
			Device:    &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{Key: held[0].Key}}}}})),
		"current state (Powered on)")
	expectFault(t, "disable a held GPU", setPassthru(ctx, c, h, false, h.GPUs[0].PciID), "is in use by virtual machine pt-1")
	other := object.NewHostSystem(c.Client, tl.hosts[1].Ref)
	expectFault(t, "vMotion", waitTask(vm.Migrate(ctx, nil, other, types.VirtualMachineMovePriorityDefaultPriority, "")),
		"not allowed with its attached device")

	second := object.NewVirtualMachine(c.Client, tl.vms[1])
	if err := waitTask(second.Reconfigure(ctx, types.VirtualMachineConfigSpec{MemoryReservationLockedToMax: types.NewBool(true),
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{staticGPU(h.GPUs[1].PciID)}})); err != nil {
		t.Fatal(err)
	}
	expectFault(t, "a GPU another VM holds", waitTask(second.PowerOn(ctx)), "in use by another virtual machine")
	if err := waitTask(vm.PowerOff(ctx)); err != nil {
		t.Fatal(err)
	}
	if g := tl.state(t).Hosts[0].GPUs[0]; g.PassthroughVM != nil {
		t.Fatalf("power-off gives the GPU back: %+v", g)
	}
}
