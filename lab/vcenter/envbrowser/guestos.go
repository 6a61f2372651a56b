package envbrowser

import (
	"strings"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// guestOSNames are the display names of the guest ids the lab's VMs and clients use most (vSphere's
// VirtualMachineGuestOsIdentifier descriptions); other ids show their id.
var guestOSNames = map[string]string{
	"ubuntu64Guest": "Ubuntu Linux (64-bit)", "debian10_64Guest": "Debian GNU/Linux 10 (64-bit)",
	"debian11_64Guest": "Debian GNU/Linux 11 (64-bit)", "debian12_64Guest": "Debian GNU/Linux 12 (64-bit)",
	"rhel8_64Guest": "Red Hat Enterprise Linux 8 (64-bit)", "rhel9_64Guest": "Red Hat Enterprise Linux 9 (64-bit)",
	"centos8_64Guest": "CentOS 8 (64-bit)", "otherLinux64Guest": "Other Linux (64-bit)",
	"windows2019srv_64Guest":     "Microsoft Windows Server 2019 (64-bit)",
	"windows2022srvNext_64Guest": "Microsoft Windows Server 2025 (64-bit)", "otherGuest": "Other (32-bit)",
	"otherGuest64": "Other (64-bit)",
}

// QueryConfigOptionEx answers the simulator's config option with every guest OS descriptor filled in: vSphere
// returns all of GuestOsDescriptor's required properties, and clients such as pyVmomi refuse a descriptor without
// them. The values are those of a 64-bit guest on ESXi 8.0 at hardware version 20 and later: at most 768 vCPUs and
// 24 TB of memory (vSphere 8.0 configuration maximums), BIOS or EFI with EFI recommended, VMXNET 3 and (Linux)
// paravirtual SCSI recommended. Per-guest recommendations beyond these are representative, not each confirmed.
func (b *Browser) QueryConfigOptionEx(req *types.QueryConfigOptionEx) soap.HasFault {
	body := b.EnvironmentBrowser.QueryConfigOptionEx(req).(*methods.QueryConfigOptionExBody)
	if body.Res != nil && body.Res.Returnval != nil {
		for i := range body.Res.Returnval.GuestOSDescriptor {
			describeGuestOS(&body.Res.Returnval.GuestOSDescriptor[i])
		}
	}
	return body
}

func describeGuestOS(d *types.GuestOsDescriptor) {
	yes, no := types.NewBool(true), types.NewBool(false)
	windows := d.Family == string(types.VirtualMachineGuestOsFamilyWindowsGuest)
	d.FullName = guestOSNames[d.Id]
	if d.FullName == "" {
		d.FullName = d.Id
	}
	d.SupportedMaxCPUs, d.NumSupportedPhysicalSockets, d.NumSupportedCoresPerSocket = 768, 128, 64
	d.SupportedMinMemMB, d.SupportedMaxMemMB, d.RecommendedMemMB = 4, 24*1024*1024, 2048
	d.RecommendedColorDepth, d.SupportedNumDisks, d.RecommendedDiskSizeMB = 32, 256, 16*1024
	d.SupportedDiskControllerList = []string{"VirtualLsiLogicController", "VirtualBusLogicController",
		"ParaVirtualSCSIController", "VirtualIDEController", "VirtualLsiLogicSASController", "VirtualAHCIController",
		"VirtualNVMEController"}
	d.RecommendedDiskController, d.RecommendedSCSIController = "ParaVirtualSCSIController", "ParaVirtualSCSIController"
	if windows {
		d.RecommendedMemMB, d.RecommendedDiskSizeMB = 4096, 90*1024
		d.RecommendedDiskController, d.RecommendedSCSIController = "VirtualLsiLogicSASController",
			"VirtualLsiLogicSASController"
	}
	d.RecommendedCdromController = "VirtualAHCIController"
	d.SupportedEthernetCard = []string{"VirtualE1000", "VirtualE1000e", "VirtualVmxnet3"}
	d.RecommendedEthernetCard, d.WakeOnLanEthernetCard = "VirtualVmxnet3", []string{"VirtualE1000e", "VirtualVmxnet3"}
	d.SupportedFirmware, d.RecommendedFirmware = []string{"bios", "efi"}, "efi"
	d.SupportedUSBControllerList = []string{"VirtualUSBController", "VirtualUSBXHCIController"}
	d.RecommendedUSBController = "VirtualUSBXHCIController"
	d.SupportsSlaveDisk, d.SmcRequired, d.SupportsWakeOnLan, d.SupportsVMI = yes, no, true, no
	d.SupportsMemoryHotAdd, d.SupportsCpuHotAdd, d.SupportsCpuHotRemove = yes, yes, no
	d.Supports3D, d.Recommended3D, d.SmcRecommended, d.Ich7mRecommended, d.UsbRecommended = yes, no, no, no, no
	d.SupportLevel, d.SupportedForCreate = "supported", yes
	if strings.HasPrefix(d.Id, "other") {
		d.SupportLevel = "unsupported"
	}
	d.VRAMSizeInKB = &types.IntOption{Min: 1024, Max: 262144, DefaultValue: 4096}
	d.NumSupportedFloppyDevices = 2
	d.SupportsPvscsiControllerForBoot, d.DiskUuidEnabled, d.SupportsHotPlugPCI = yes, no, yes
	d.SupportsSecureBoot, d.DefaultSecureBoot, d.SupportsTPM20 = yes, no, yes
}
