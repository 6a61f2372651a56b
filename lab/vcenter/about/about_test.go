package about

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

// vCenter presents 8.0 Update 3 and its hosts ESXi 8.0 Update 2; what the simulator filled in besides stays.
func TestProducts(t *testing.T) {
	sim := types.AboutInfo{Name: "VMware vCenter Server", Vendor: "VMware, Inc.", Version: "6.5.0", Build: "5973321",
		ApiVersion: "6.5", OsType: "linux-x64", InstanceUuid: "dbed6e0c-bd88-4ef6-b594-21283e1c677f"}
	vc := VCenter(sim)
	if vc.ApiVersion != "8.0.3.0" || vc.Version != "8.0.3" || vc.Build != "24022515" ||
		vc.FullName != "VMware vCenter Server 8.0.3 build-24022515" || vc.LicenseProductVersion != "8.0" {
		t.Errorf("vCenter: %+v", vc)
	}
	esxi := ESXi(sim)
	if esxi.ApiVersion != "8.0.2.0" || esxi.Version != "8.0.2" || esxi.Build != "22380479" ||
		esxi.FullName != "VMware ESXi 8.0.2 build-22380479" || esxi.LicenseProductVersion != "8.0" {
		t.Errorf("ESXi: %+v", esxi)
	}
	for _, a := range []types.AboutInfo{vc, esxi} {
		if a.Vendor != sim.Vendor || a.OsType != sim.OsType || a.InstanceUuid != sim.InstanceUuid {
			t.Errorf("the simulator's other fields changed: %+v", a)
		}
	}
}
