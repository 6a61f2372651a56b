package imageconfig

import (
	"context"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/bundle"
	"vcsim/vlcm"
)

const (
	testBaseImage = "8.0.2-0.0.22380479"
	testDriverVib = "NVIDIA_bootbank_NVD-AIE-800_535.154.02-1OEM.800.1.0.20613240"
)

// FetchSoftwarePackages lists, sorted by name, the base image's VIBs at the installed base image version with its
// release date, and the VIBs of every other installed component a depot describes, each read from its VIB id; a
// component no depot describes and a malformed VIB id are left out, and a host that runs nothing lists nothing.
func TestFetchSoftwarePackages(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	tl.vlcm.baseImages = []vlcm.BaseImage{{Version: testBaseImage, DisplayVersion: "8.0 U2",
		ReleaseDate: "2023-09-21T00:00:00.000Z"}}
	tl.vlcm.components = []bundle.Component{{Name: "NVD-AIE-800", Version: "535.154.02-1OEM.800.1.0.20613240",
		Summary: "NVIDIA AI Enterprise host driver", ReleaseDate: "2024-01-16", Vibs: []string{testDriverVib, "bad"}}}
	tl.vlcm.installed[tl.hosts[0]] = map[string]string{vlcm.BaseImageComponent: testBaseImage,
		"NVD-AIE-800": "535.154.02-1OEM.800.1.0.20613240", "unknown-component": "1.0"}
	fetch := func(host types.ManagedObjectReference) []types.SoftwarePackage {
		res, err := methods.FetchSoftwarePackages(ctx, tl.c.Client, &types.FetchSoftwarePackages{
			This: tl.manager(t, host)})
		if err != nil {
			t.Fatal(err)
		}
		if res == nil { // the answer's element is not fetchSoftwarePackagesResponse, which govmomi decodes
			t.Fatal("no response decoded")
		}
		return res.Returnval
	}
	packages := fetch(tl.hosts[0])
	if len(packages) != len(baseImageVibs)+1 {
		t.Fatalf("%d packages, want the base image's %d and the driver's: %+v", len(packages), len(baseImageVibs),
			packages)
	}
	byName := map[string]types.SoftwarePackage{}
	for i, p := range packages {
		if i > 0 && packages[i-1].Name > p.Name {
			t.Errorf("not sorted by name: %s before %s", packages[i-1].Name, p.Name)
		}
		byName[p.Name] = p
	}
	released := time.Date(2023, 9, 21, 0, 0, 0, 0, time.UTC)
	if p := byName["esx-base"]; p.Version != testBaseImage || p.Vendor != "VMware" || p.Type != "bootbank" ||
		p.AcceptanceLevel != "vmware_certified" || p.CreationDate == nil || !p.CreationDate.Equal(released) {
		t.Errorf("esx-base: %+v", p)
	}
	if p := byName["NVD-AIE-800"]; p.Version != "535.154.02-1OEM.800.1.0.20613240" || p.Vendor != "NVIDIA" ||
		p.AcceptanceLevel != "partner" || p.Summary != "NVIDIA AI Enterprise host driver" || p.CreationDate == nil ||
		!p.CreationDate.Equal(time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("the driver's VIB: %+v", p)
	}
	if got := fetch(tl.hosts[1]); len(got) != 0 {
		t.Errorf("a host that runs nothing lists %+v", got)
	}
	tl.vlcm.installed[tl.hosts[1]] = map[string]string{vlcm.BaseImageComponent: "7.0.3-0.95.22348816"}
	for _, p := range fetch(tl.hosts[1]) {
		if p.Version != "7.0.3-0.95.22348816" || p.CreationDate != nil {
			t.Errorf("a base image vLCM does not know: %+v", p)
		}
	}
}

// A VIB id reads as vendor, type, name and version; VMware's VIBs are VMware certified, the others partner.
func TestVibPackage(t *testing.T) {
	vib, ok := vibPackage("NVIDIA_bootbank_NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240", "host driver", nil)
	if !ok || vib.Vendor != "NVIDIA" || vib.Type != "bootbank" || vib.Name != "NVD-VGPU-800" ||
		vib.Version != "525.105.14-1OEM.800.1.0.20613240" || vib.AcceptanceLevel != "partner" {
		t.Errorf("VIB id read as %+v, %v", vib, ok)
	}
	if vib, ok := vibPackage("VMW_bootbank_nvme-pcie_1.2.4.11-1vmw.802.0.0.22380479", "", nil); !ok ||
		vib.AcceptanceLevel != "vmware_certified" || vib.Name != "nvme-pcie" {
		t.Errorf("a VMware VIB read as %+v, %v", vib, ok)
	}
	for _, id := range []string{"no-underscores", "NVIDIA_bootbank_noversion", "_bootbank_name_1.0"} {
		if _, ok := vibPackage(id, "", nil); ok {
			t.Errorf("a malformed VIB id %q was read", id)
		}
	}
}
