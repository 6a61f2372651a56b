package pcipassthru

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/labtest"
	"vcsim/topology"
)

// testLab is govmomi's own simulator (labtest.Simulator: cluster DC0_C0 of two hosts, standalone host DC0_H0) with
// each host's passthrough system as the lab attaches it. The first cluster host has two A100s (gpu.NewHost), whose
// rules check a switch; the second has one T4 and rebinds devices only at a reboot; DC0_H0 has no GPUs.
type testLab struct {
	c       *govmomi.Client
	hosts   []types.ManagedObjectReference
	systems []*System
	gpus    []*gpu.Host
	vm      types.ManagedObjectReference // a VM of the simulator, to run vGPUs or hold a GPU
	updates map[string]int               // property updates through the lab by property name
}

func (tl *testLab) Update(obj mo.Reference, changes ...types.PropertyChange) {
	for _, c := range changes {
		tl.updates[c.Name]++
	}
	simulator.Map.Update(obj, changes)
}

// gpuLab is the lab as the GPU model sees it here: VM names from the simulator, the devices' passthrough state from
// the systems.
type gpuLab struct{ tl *testLab }

func (g gpuLab) Logf(string, ...interface{})          {}
func (g gpuLab) Publish(types.ManagedObjectReference) {}

func (g gpuLab) VMName(ref types.ManagedObjectReference) string {
	if vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine); ok {
		return vm.Name
	}
	return ""
}

func (g gpuLab) PassthruInfo(host types.ManagedObjectReference, pciID string) *types.HostPciPassthruInfo {
	for i, ref := range g.tl.hosts {
		if ref == host {
			return g.tl.systems[i].Info(pciID)
		}
	}
	return nil
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	models := labtest.Catalog(t)
	tl := &testLab{updates: map[string]int{}}
	var hosts []*simulator.HostSystem
	for _, e := range simulator.Map.All("ClusterComputeResource") {
		for _, ref := range e.(*simulator.ClusterComputeResource).Host {
			hosts = append(hosts, simulator.Map.Get(ref).(*simulator.HostSystem))
		}
	}
	for _, e := range simulator.Map.All("ComputeResource") {
		hosts = append(hosts, simulator.Map.Get(e.(*mo.ComputeResource).Host[0]).(*simulator.HostSystem))
	}
	specs := [][]*topology.GPUSpec{{{Model: "A100-40", Count: 2}}, {{Model: "T4", Count: 1}}, nil}
	for i, obj := range hosts {
		h := gpu.NewHost(gpuLab{tl}, obj.Self, obj.Name, specs[i], models)
		hw := *obj.Hardware
		hw.PciDevice = append(append([]types.HostPciDevice(nil), obj.Hardware.PciDevice...), h.PCIDevices()...)
		obj.Hardware = &hw
		var gpus GPUs
		if specs[i] != nil {
			gpus = h
		}
		s := New(tl, obj.Self, obj.Hardware.PciDevice, gpus, i == 1)
		simulator.Map.Put(s)
		ref := s.Self
		obj.ConfigManager.PciPassthruSystem = &ref
		obj.Config.PciPassthruInfo = s.HostInfo()
		tl.hosts, tl.systems, tl.gpus = append(tl.hosts, obj.Self), append(tl.systems, s), append(tl.gpus, h)
	}
	tl.vm = simulator.Map.All("VirtualMachine")[0].Reference()
	tl.c = labtest.Serve(t, model, nil)
	return tl
}

// info reads a host's passthrough entries by device from its system and from its config.pciPassthruInfo, which
// must agree, and answers them with the host's PCI devices.
func (tl *testLab) info(t *testing.T, i int) (map[string]types.HostPciPassthruInfo, []types.HostPciDevice) {
	t.Helper()
	ctx := context.Background()
	var host mo.HostSystem
	if err := tl.c.RetrieveOne(ctx, tl.hosts[i], []string{"configManager.pciPassthruSystem", "config.pciPassthruInfo",
		"hardware.pciDevice"}, &host); err != nil {
		t.Fatal(err)
	}
	var system mo.HostPciPassthruSystem
	if err := tl.c.RetrieveOne(ctx, *host.ConfigManager.PciPassthruSystem, []string{"pciPassthruInfo"}, &system); err != nil {
		t.Fatal(err)
	}
	if len(system.PciPassthruInfo) != len(host.Config.PciPassthruInfo) {
		t.Fatalf("host %d: the system lists %d devices, config.pciPassthruInfo %d", i, len(system.PciPassthruInfo),
			len(host.Config.PciPassthruInfo))
	}
	out := map[string]types.HostPciPassthruInfo{}
	for j, info := range system.PciPassthruInfo {
		e, c := *info.GetHostPciPassthruInfo(), *host.Config.PciPassthruInfo[j].GetHostPciPassthruInfo()
		if e != c {
			t.Errorf("host %d: the system has %+v, config.pciPassthruInfo %+v", i, e, c)
		}
		out[e.Id] = e
	}
	return out, host.Hardware.PciDevice
}

func (tl *testLab) update(i int, applyNow *bool, enable bool, ids ...string) error {
	config := make([]types.BaseHostPciPassthruConfig, len(ids))
	for j, id := range ids {
		config[j] = &types.HostPciPassthruConfig{Id: id, PassthruEnabled: enable, ApplyNow: applyNow}
	}
	_, err := methods.UpdatePassthruConfig(context.Background(), tl.c.Client, &types.UpdatePassthruConfig{
		This: tl.systems[i].Self, Config: config})
	return err
}

func expectFault(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !labtest.IsFault(err, "HostConfigFault") || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: want a HostConfigFault with %q, got %v", what, want, err)
	}
}

// Each host has its own system, with an entry per PCI device as ESXi reports them: the bridges cannot be passed
// through, every other device (the GPUs among them) can; none is enabled or active; an endpoint depends on itself.
func TestPassthruInfoAtStart(t *testing.T) {
	tl := startLab(t)
	if tl.systems[0].Self == tl.systems[1].Self || tl.systems[0].Self.Type != "HostPciPassthruSystem" {
		t.Fatalf("systems of two hosts: %v, %v", tl.systems[0].Self, tl.systems[1].Self)
	}
	for i := range tl.hosts {
		info, devices := tl.info(t, i)
		if len(info) != len(devices) {
			t.Errorf("host %d: %d passthrough entries for %d PCI devices", i, len(info), len(devices))
		}
		bridges, capable := 0, 0
		for _, d := range devices {
			e, ok := info[d.Id]
			bridge := uint16(d.ClassId)>>8 == pciClassBridge
			switch {
			case !ok:
				t.Errorf("host %d: no passthrough entry for %s", i, d.Id)
			case e.PassthruCapable == bridge:
				t.Errorf("host %d: device %s of class %#04x: passthrough capable %v", i, d.Id, uint16(d.ClassId),
					e.PassthruCapable)
			case e.PassthruEnabled || e.PassthruActive || e.DependentDevice != d.Id:
				t.Errorf("host %d: device %s starts as %+v", i, d.Id, e)
			}
			if bridge {
				bridges++
			} else {
				capable++
			}
		}
		if bridges == 0 || capable == 0 {
			t.Fatalf("host %d: %d bridges, %d other devices; the test needs both", i, bridges, capable)
		}
		for _, g := range tl.gpus[i].GPUs {
			if !info[g.PciID].PassthruCapable {
				t.Errorf("host %d: GPU %s cannot be passed through", i, g.PciID)
			}
		}
	}
}

// UpdatePassthruConfig takes all entries or none: a device the host lacks, a bridge, a GPU running vGPUs and a GPU a
// VM holds are refused with HostConfigFault, and the request changes nothing.
func TestUpdatePassthruConfigRefuses(t *testing.T) {
	tl := startLab(t)
	h := tl.gpus[0]
	first, second := h.GPUs[0].PciID, h.GPUs[1].PciID
	_, devices := tl.info(t, 0)
	var bridge string
	for _, d := range devices {
		if uint16(d.ClassId)>>8 == pciClassBridge {
			bridge = d.Id
		}
	}
	vmName := gpuLab{tl}.VMName(tl.vm)
	expectFault(t, "unknown device", tl.update(0, nil, true, first, "0000:99:00.0"),
		"device 0000:99:00.0 is not a PCI device of the host")
	expectFault(t, "bridge", tl.update(0, nil, true, first, bridge), "device "+bridge+" cannot be passed through")
	h.GPUs[1].VGPUs = []*gpu.Slot{{VM: tl.vm, Profile: "grid_a100-4c", GPU: h.GPUs[1], At: -1}}
	expectFault(t, "GPU running vGPUs", tl.update(0, nil, true, first, second),
		"device "+second+" is in use by vGPU virtual machines ("+vmName+"); power them off first")
	h.GPUs[1].VGPUs = nil
	if tl.updates["pciPassthruInfo"] != 0 {
		t.Errorf("refused updates published %v", tl.updates)
	}
	info, _ := tl.info(t, 0)
	if info[first].PassthruEnabled || info[second].PassthruEnabled {
		t.Fatalf("a refused update changed nothing, yet: %+v, %+v", info[first], info[second])
	}

	if err := tl.update(0, nil, true, first); err != nil {
		t.Fatal(err)
	}
	vm := tl.vm
	h.GPUs[0].HeldBy = &vm
	expectFault(t, "disable a GPU a VM holds", tl.update(0, nil, false, first),
		"device "+first+" is in use by virtual machine "+vmName+"; power it off first")
	if info, _ := tl.info(t, 0); !info[first].PassthruEnabled || !info[first].PassthruActive {
		t.Fatalf("a GPU a VM holds stays enabled: %+v", info[first])
	}
}

// passthruActive follows passthruEnabled at once unless applyNow is false or the host rebinds devices only at a
// reboot; then it follows at the host's reboot (Rebooted). Each change reaches the system's pciPassthruInfo and the
// host's config.pciPassthruInfo through the lab; a host without GPUs passes its other devices through.
func TestUpdatePassthruConfigApplies(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	first, second := tl.gpus[0].GPUs[0].PciID, tl.gpus[0].GPUs[1].PciID
	if err := tl.update(0, nil, true, first, second); err != nil {
		t.Fatal(err)
	}
	info, _ := tl.info(t, 0)
	if e := info[first]; !e.PassthruEnabled || !e.PassthruActive || !info[second].PassthruActive {
		t.Fatalf("enabled and active at once: %+v, %+v", e, info[second])
	}
	if tl.updates["pciPassthruInfo"] != 1 || tl.updates["config.pciPassthruInfo"] != 1 {
		t.Errorf("one update, published once to the system and the host: %v", tl.updates)
	}
	if _, why := gpu.LoadsOf(tl.gpus[0])[0].Fit("grid_a100-4c"); !strings.Contains(why, "passed through whole") {
		t.Errorf("the GPU model reads the entry through Info: a passthrough GPU takes no vGPU, got %q", why)
	}
	if err := tl.update(0, types.NewBool(false), false, first); err != nil {
		t.Fatal(err)
	}
	if e := tl.systems[0].Info(first); e.PassthruEnabled || !e.PassthruActive {
		t.Fatalf("applyNow false: disabled, still active until the reboot: %+v", e)
	}
	if err := tl.update(0, types.NewBool(true), false, second); err != nil {
		t.Fatal(err)
	}
	if info, _ := tl.info(t, 0); info[second].PassthruEnabled || info[second].PassthruActive ||
		!info[first].PassthruActive {
		t.Fatalf("applyNow true: off at once: %+v, %+v", info[second], info[first])
	}

	waiting := tl.gpus[1].GPUs[0].PciID
	if err := tl.update(1, types.NewBool(true), true, waiting); err != nil {
		t.Fatal(err)
	}
	if info, _ := tl.info(t, 1); !info[waiting].PassthruEnabled || info[waiting].PassthruActive {
		t.Fatalf("a host that rebinds only at a reboot: enabled, not active: %+v", info[waiting])
	}
	tl.systems[1].Rebooted()
	if info, _ := tl.info(t, 1); !info[waiting].PassthruActive {
		t.Fatalf("active after the reboot: %+v", info[waiting])
	}

	_, devices := tl.info(t, 2)
	var nic string
	for _, d := range devices {
		if uint16(d.ClassId)>>8 != pciClassBridge {
			nic = d.Id
		}
	}
	if err := tl.update(2, nil, true, nic); err != nil {
		t.Fatal(err)
	}
	if info, _ := tl.info(t, 2); !info[nic].PassthruActive {
		t.Fatalf("a device of a host without GPUs: %+v", info[nic])
	}
	if _, err := methods.Refresh(ctx, tl.c.Client, &types.Refresh{This: tl.systems[2].Self}); err != nil {
		t.Errorf("Refresh: %v", err)
	}
}
