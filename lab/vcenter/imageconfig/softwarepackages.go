package imageconfig

import (
	"sort"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vlcm"
)

// baseImageVibs are VIBs of ESXi's base image, each at the base image's version, as `esxcli software vib list`
// shows them on ESXi 8.0. A real base image carries well over a hundred (drivers included); these are its core
// ones, enough for a client that lists packages. The full list of a given build is not reproduced (unconfirmed).
var baseImageVibs = []string{"bmcal", "cpu-microcode", "crx", "esx-base", "esx-dvfilter-generic-fastpath",
	"esx-update", "esx-xserver", "esxio-combiner", "gc", "loadesx", "native-misc-drivers", "trx", "vdfs", "vsan",
	"vsanhealth"}

// FetchSoftwarePackages lists the VIBs installed on the host (vSphere Web Services API, HostImageConfigManager
// .fetchSoftwarePackages, returning SoftwarePackage): the base image's VIBs and those of every other installed
// component, as vLCM's depots describe them. A VIB id reads <vendor>_<type>_<name>_<version>.
func (m *Manager) FetchSoftwarePackages(*types.FetchSoftwarePackages) soap.HasFault {
	v := m.lab
	installed := v.Installed(m.host)
	var packages []types.SoftwarePackage
	for component, version := range installed {
		if component == vlcm.BaseImageComponent {
			released := v.BaseImage(version)
			for _, name := range baseImageVibs {
				packages = append(packages, softwarePackage("VMware", "bootbank", name, version,
					types.HostImageAcceptanceLevelVmware_certified, "ESXi base image "+version, baseImageDate(released)))
			}
			continue
		}
		described := v.Component(component, version)
		if described == nil {
			continue
		}
		for _, id := range described.Vibs {
			if vib, ok := vibPackage(id, described.Summary, parseDate(described.ReleaseDate)); ok {
				packages = append(packages, vib)
			}
		}
	}
	sort.Slice(packages, func(i, j int) bool { return packages[i].Name < packages[j].Name })
	return &fetchSoftwarePackagesBody{Res: &fetchSoftwarePackagesResponse{Returnval: packages}}
}

// The simulator names a response element after its Go type; vSphere's is fetchSoftwarePackagesResponse (the method
// name starts in lower case), which clients such as govmomi decode by name.
type fetchSoftwarePackagesResponse types.FetchSoftwarePackagesResponse

type fetchSoftwarePackagesBody struct {
	Res    *fetchSoftwarePackagesResponse
	Fault_ *soap.Fault
}

func (b *fetchSoftwarePackagesBody) Fault() *soap.Fault { return b.Fault_ }

// vibPackage reads a VIB id (<vendor>_<type>_<name>_<version>, as in NVIDIA_bootbank_NVD-VGPU-800_525.105.14-1OEM...).
func vibPackage(id, summary string, created *time.Time) (types.SoftwarePackage, bool) {
	parts := strings.SplitN(id, "_", 3)
	if len(parts) != 3 {
		return types.SoftwarePackage{}, false
	}
	cut := strings.LastIndex(parts[2], "_")
	if cut <= 0 || parts[0] == "" || parts[1] == "" {
		return types.SoftwarePackage{}, false
	}
	level := types.HostImageAcceptanceLevelPartner
	if parts[0] == "VMware" || parts[0] == "VMW" {
		level = types.HostImageAcceptanceLevelVmware_certified
	}
	return softwarePackage(parts[0], parts[1], parts[2][:cut], parts[2][cut+1:], level, summary, created), true
}

func softwarePackage(vendor, kind, name, version string, level types.HostImageAcceptanceLevel, summary string,
	created *time.Time) types.SoftwarePackage {
	yes := true
	return types.SoftwarePackage{Name: name, Version: version, Type: kind, Vendor: vendor,
		AcceptanceLevel: string(level), Summary: summary, Description: summary, CreationDate: created,
		MaintenanceModeRequired: &yes, Capability: types.SoftwarePackageCapability{LiveInstallAllowed: new(bool),
			LiveRemoveAllowed: new(bool), StatelessReady: &yes, Overlay: new(bool)}}
}

func baseImageDate(image *vlcm.BaseImage) *time.Time {
	if image == nil {
		return nil
	}
	return parseDate(image.ReleaseDate)
}

func parseDate(value string) *time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, value); err == nil {
			return &t
		}
	}
	return nil
}
