package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vlcm"
)

// fetchSoftwarePackages lists the base image's VIBs at the installed base image version; a VIB id reads as vendor,
// type, name and version.
func TestFetchSoftwarePackages(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var host mo.HostSystem
	if err := c.RetrieveOne(ctx, tl.hosts[0].Ref, []string{"configManager.imageConfigManager"}, &host); err != nil {
		t.Fatal(err)
	}
	res, err := methods.FetchSoftwarePackages(ctx, c.Client, &types.FetchSoftwarePackages{
		This: *host.ConfigManager.ImageConfigManager})
	if err != nil {
		t.Fatal(err)
	}
	base := tl.vlcm.Installed(tl.hosts[0].Ref)[vlcm.BaseImageComponent]
	found := false
	for _, p := range res.Returnval {
		if p.Name == "esx-base" {
			found = p.Version == base && p.Vendor == "VMware" && p.AcceptanceLevel == "vmware_certified"
		}
	}
	if !found {
		t.Errorf("esx-base at %s not listed: %+v", base, res.Returnval)
	}
	vib, ok := vibPackage("NVIDIA_bootbank_NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240", "host driver", nil)
	if !ok || vib.Vendor != "NVIDIA" || vib.Type != "bootbank" || vib.Name != "NVD-VGPU-800" ||
		vib.Version != "525.105.14-1OEM.800.1.0.20613240" || vib.AcceptanceLevel != "partner" {
		t.Errorf("VIB id read as %+v, %v", vib, ok)
	}
	if _, ok := vibPackage("no-underscores", "", nil); ok {
		t.Error("a malformed VIB id was read")
	}
}
