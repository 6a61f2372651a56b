// Package about holds the product the lab presents: vCenter Server's about info (content.about) and each host's
// (config.product, and the host view's content.about).
package about

import (
	"github.com/vmware/govmomi/vim25/types"
)

// The lab presents vCenter Server 8.0 Update 3, so that clients negotiate an API version that knows every vGPU
// type and property the lab returns (HostGraphicsInfo.vgpuMode is 8.0.3.0). Its hosts run ESXi 8.0 Update 2, the
// base image of the lab's vLCM clusters. The vCenter build is the 8.0 U3 GA build as remembered, not confirmed
// against VMware's release notes; clients negotiate on apiVersion, not on the build.
const (
	apiVersion         = "8.0.3.0"
	productVersion     = "8.0.3"
	vcenterBuild       = "24022515"
	esxiAPIVersion     = "8.0.2.0"
	esxiProductVersion = "8.0.2"
	esxiBuild          = "22380479"
)

// VCenter is a with vCenter Server's version, build and API version.
func VCenter(a types.AboutInfo) types.AboutInfo {
	a.Version, a.Build, a.ApiVersion = productVersion, vcenterBuild, apiVersion
	a.FullName = "VMware vCenter Server " + productVersion + " build-" + vcenterBuild
	a.LicenseProductVersion = "8.0"
	return a
}

// ESXi is a with the version, build and API version of ESXi on the lab's hosts.
func ESXi(a types.AboutInfo) types.AboutInfo {
	a.Version, a.Build, a.ApiVersion = esxiProductVersion, esxiBuild, esxiAPIVersion
	a.FullName = "VMware ESXi " + esxiProductVersion + " build-" + esxiBuild
	a.LicenseProductVersion = "8.0"
	return a
}
