package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"

	"vcsim/gpu"
	"vcsim/labtest"
)

const nvswitchTopology = `{"datacenters": [{"name": "dc", "hosts": [
	{"name": "hgx-01", "gpus": [{"model": "A100-40", "count": 8}], "nvswitches": 6, "nvlink": [[0, 1, 2, 3, 4, 5, 6, 7]]}]}]}`

func TestAnNVSwitchBoardShowsItsSwitchesAndLinksAllItsGPUs(t *testing.T) {
	tl, c := startConnectedLab(t, nvswitchTopology)
	h := tl.hosts[0]
	var hs mo.HostSystem
	if err := object.NewHostSystem(c.Client, h.Ref).Properties(context.Background(), h.Ref,
		[]string{"hardware.pciDevice", "config.pciPassthruInfo"}, &hs); err != nil {
		t.Fatal(err)
	}
	switches := 0
	for _, d := range hs.Hardware.PciDevice {
		if uint16(d.VendorId) == gpu.NVIDIAVendorID && uint16(d.ClassId) == gpu.PCIClassOtherBridge {
			switches++
			if uint16(d.DeviceId) != 0x1af1 || d.DeviceName != "GA100 [A100 NVSwitch]" {
				t.Fatalf("an A100 board's NVSwitch: %+v", d)
			}
		}
	}
	capable := map[string]bool{}
	for _, info := range hs.Config.PciPassthruInfo {
		e := info.GetHostPciPassthruInfo()
		capable[e.Id] = e.PassthruCapable
	}
	if switches != 6 || capable["0000:05:00.0"] || !capable[h.GPUs[0].PciID] {
		t.Fatalf("six NVSwitches, not passthrough-capable: %d %v", switches, capable)
	}
	s := tl.state(t).Hosts[0]
	if len(s.NVSwitches) != 6 || len(s.NVLink) != 28 {
		t.Fatalf("the state lists the switches and every GPU pair on the fabric: %d switches, %d pairs",
			len(s.NVSwitches), len(s.NVLink))
	}
}

func TestNVLinkSetsBeyondPairsNeedNVSwitches(t *testing.T) {
	_, err := labtest.Topology(t, strings.Replace(nvswitchTopology, `"nvswitches": 6, `, "", 1))
	if err == nil || !strings.Contains(err.Error(), "on a host with nvswitches") {
		t.Fatalf("a set of eight without switches is refused: %v", err)
	}
	_, err = labtest.Topology(t, strings.Replace(nvswitchTopology, `"nvswitches": 6`, `"nvswitches": 7`, 1))
	if err == nil || !strings.Contains(err.Error(), "nvswitches must be between 0 and 6") {
		t.Fatalf("seven switches are refused: %v", err)
	}
}
