package hostnet

import (
	"testing"

	"github.com/vmware/govmomi/simulator"
)

// A host asked for four NICs has the simulator's two and two copies of the second, each with a device name, key,
// PCI address and MAC address of its own; fewer than the host has changes nothing.
func TestAddPhysicalNics(t *testing.T) {
	tl := startLab(t)
	host := simulator.Map.Get(tl.Hosts[0]).(*simulator.HostSystem)
	AddPhysicalNics(host, 1)
	if n := len(host.Config.Network.Pnic); n != 2 {
		t.Fatalf("%d NICs after asking for one, want the simulator's 2", n)
	}
	AddPhysicalNics(host, 4)
	seen := map[string]bool{}
	for i, nic := range host.Config.Network.Pnic {
		if want := "vmnic" + string(rune('0'+i)); nic.Device != want || nic.Key != physicalNicKey(want) {
			t.Errorf("NIC %d: device %s key %s, want %s", i, nic.Device, nic.Key, want)
		}
		for _, value := range []string{nic.Pci, nic.Mac} {
			if seen[value] {
				t.Errorf("NIC %s repeats %s", nic.Device, value)
			}
			seen[value] = true
		}
	}
	if n := len(host.Config.Network.Pnic); n != 4 {
		t.Errorf("%d NICs, want 4", n)
	}
}
