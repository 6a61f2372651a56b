package main

import "github.com/vmware/govmomi/vim25/types"

// The lab presents vCenter Server and ESXi 8.0 Update 2, so that clients negotiate an API version that knows every
// vGPU type the lab returns (HostSharedGpuCapabilities, for example, is newer than the simulator's default 6.5).
const (
	apiVersion     = "8.0.2.0"
	productVersion = "8.0.2"
	vcenterBuild   = "22385739"
	esxiBuild      = "22380479"
)

func vcenterAbout(a types.AboutInfo) types.AboutInfo {
	a.Version, a.Build, a.ApiVersion = productVersion, vcenterBuild, apiVersion
	a.FullName = "VMware vCenter Server " + productVersion + " build-" + vcenterBuild
	a.LicenseProductVersion = "8.0"
	return a
}

func esxiAbout(a types.AboutInfo) types.AboutInfo {
	a.Version, a.Build, a.ApiVersion = productVersion, esxiBuild, apiVersion
	a.FullName = "VMware ESXi " + productVersion + " build-" + esxiBuild
	a.LicenseProductVersion = "8.0"
	return a
}
