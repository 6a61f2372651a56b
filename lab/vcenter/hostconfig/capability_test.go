package hostconfig

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

// A host's capability is an ESXi 8.0 host's: vMotion, maintenance mode, DirectPath I/O and the per-host maximums;
// each call gives a value of its own, which a host may change (the lab sets deviceRebindWithoutRebootSupported).
func TestCapability(t *testing.T) {
	isTrue := func(b *bool) bool { return b != nil && *b }
	hc := Capability()
	if !hc.VmotionSupported || !hc.MaintenanceModeSupported || !isTrue(hc.VmDirectPathGen2Supported) ||
		!isTrue(hc.StorageVMotionSupported) || !hc.NfsSupported || !hc.IscsiSupported {
		t.Errorf("features: %+v", hc)
	}
	if hc.MaxRunningVMs != 1024 || hc.MaxHostRunningVms != 1024 || hc.MaxHostSupportedVcpus != 4096 ||
		hc.MaxVcpusPerFtVm != 8 {
		t.Errorf("limits: %+v", hc)
	}
	if hc.DeviceRebindWithoutRebootSupported != nil {
		t.Errorf("deviceRebindWithoutRebootSupported is the lab's to set: %v", *hc.DeviceRebindWithoutRebootSupported)
	}
	hc.DeviceRebindWithoutRebootSupported = types.NewBool(false)
	*hc.StorageVMotionSupported = false
	if other := Capability(); other.DeviceRebindWithoutRebootSupported != nil || !isTrue(other.StorageVMotionSupported) {
		t.Errorf("one host's change shows in another's capability: %+v", other)
	}
}
