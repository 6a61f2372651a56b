package hostnet

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"

	"vcsim/simobj"
)

// A host has the simulator's two physical NICs (vmnic0, vmnic1: 10 Gb/s vmxnet3, as govmomi recorded them from a
// nested ESXi host) unless its topology entry asks for more: the others are copies of vmnic1 on PCI buses of their
// own, with MAC addresses of their own.
func AddPhysicalNics(host *simulator.HostSystem, count int) {
	network := host.Config.Network
	if network == nil || len(network.Pnic) == 0 {
		return
	}
	template := network.Pnic[len(network.Pnic)-1]
	for i := len(network.Pnic); i < count; i++ {
		nic := template
		nic.Device = fmt.Sprintf("vmnic%d", i)
		nic.Key = physicalNicKey(nic.Device)
		nic.Pci = fmt.Sprintf("0000:%02x:00.0", 0x13+8*(i-1))
		nic.Mac = fmt.Sprintf("00:0c:29:%s:%02x", hostMACSuffix(host), 0xa0+i)
		if nic.FcoeConfiguration != nil {
			fcoe := *nic.FcoeConfiguration
			fcoe.SourceMac = nic.Mac
			nic.FcoeConfiguration = &fcoe
		}
		network.Pnic = append(network.Pnic, nic)
	}
}

// hostMACSuffix is the middle of a host's NIC addresses, from the number in its id (host-21: 00:15).
func hostMACSuffix(host *simulator.HostSystem) string {
	var n int
	_, _ = fmt.Sscanf(simobj.Number(host.Self), "%d", &n)
	return fmt.Sprintf("%02x:%02x", n>>8&0xff, n&0xff)
}
