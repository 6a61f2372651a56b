package envbrowser

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/vgputypes"
)

// configTarget calls QueryConfigTarget on browser (for host, or the whole compute resource when host is nil) and
// decodes the answer with the vGPU lists of API 7.0.3.
func (tl *testLab) configTarget(browser types.ManagedObjectReference, host *types.ManagedObjectReference) (
	*vgputypes.ConfigTarget, error) {
	req := &methods.QueryConfigTargetBody{Req: &types.QueryConfigTarget{This: browser, Host: host}}
	res := &vgputypes.QueryConfigTargetBody{}
	if err := tl.c.Client.RoundTrip(context.Background(), req, res); err != nil {
		return nil, err
	}
	return res.Res.Returnval, nil
}

func names(target *vgputypes.ConfigTarget) (shared, profiles, devices []string) {
	for _, p := range target.SharedGpuPassthroughTypes {
		shared = append(shared, p.Vgpu)
	}
	for _, p := range target.VgpuProfileInfo {
		profiles = append(profiles, p.ProfileName)
	}
	for _, d := range target.VgpuDeviceInfo {
		devices = append(devices, d.DeviceName)
	}
	return shared, profiles, devices
}

// A cluster's config target lists the profiles and models of its hosts' GPUs once each (the T4's are on both hosts),
// in host order; for one host, that host's; the simulator's own answer (datastores, NUMA nodes) stays.
func TestConfigTargetListsTheHostsVGPUs(t *testing.T) {
	tl := startLab(t)
	models := labtest.Catalog(t)
	var p40, t4 []string
	for _, p := range models.GPUs["P40"].Profiles {
		p40 = append(p40, p.Name)
	}
	for _, p := range models.GPUs["T4"].Profiles {
		t4 = append(t4, p.Name)
	}

	target, err := tl.configTarget(tl.clusterBrowser, nil)
	if err != nil {
		t.Fatal(err)
	}
	shared, profiles, devices := names(target)
	both := append(append([]string(nil), p40...), t4...)
	if !reflect.DeepEqual(shared, both) || !reflect.DeepEqual(profiles, both) {
		t.Errorf("cluster: sharedGpuPassthroughTypes %v, vgpuProfileInfo %v; want %v", shared, profiles, both)
	}
	if want := []string{"Tesla P40", "Tesla T4"}; !reflect.DeepEqual(devices, want) {
		t.Errorf("cluster: vgpuDeviceInfo %v, want %v", devices, want)
	}
	if target.NumNumaNodes != 2 || len(target.Datastore) == 0 {
		t.Errorf("cluster: the simulator's answer is lost: %d NUMA nodes, %d datastores", target.NumNumaNodes,
			len(target.Datastore))
	}
	for _, p := range target.VgpuProfileInfo {
		if p.ProfileName == "grid_t4-16q" && (p.FbSizeInGib != 16 || p.ProfileClass != "quadro") {
			t.Errorf("grid_t4-16q: %+v", p)
		}
	}

	target, err = tl.configTarget(tl.clusterBrowser, &tl.clusterHosts[1])
	if err != nil {
		t.Fatal(err)
	}
	shared, profiles, devices = names(target)
	if !reflect.DeepEqual(shared, t4) || !reflect.DeepEqual(profiles, t4) || len(devices) != 1 ||
		devices[0] != "Tesla T4" || target.NumNumaNodes != 1 {
		t.Errorf("the T4 host: shared %v, profiles %v, devices %v, %d NUMA nodes", shared, profiles, devices,
			target.NumNumaNodes)
	}
}

// A host of another compute resource is refused as vCenter refuses it; a host the lab does not know has no vGPUs.
func TestConfigTargetOfOtherHosts(t *testing.T) {
	tl := startLab(t)
	_, err := tl.configTarget(tl.clusterBrowser, &tl.standaloneHost)
	if !labtest.IsFault(err, "InvalidArgument") {
		t.Fatalf("a host of another compute resource: %v", err)
	}
	fault := soap.ToSoapFault(err).VimFault().(types.InvalidArgument)
	if fault.InvalidProperty != "host" || !strings.Contains(err.Error(),
		tl.standaloneHost.Value+" is not a host of "+tl.cluster.Value) {
		t.Errorf("fault %+v: %v", fault, err)
	}

	target, err := tl.configTarget(tl.saBrowser, nil)
	if err != nil {
		t.Fatal(err)
	}
	if shared, profiles, devices := names(target); len(shared)+len(profiles)+len(devices) != 0 ||
		target.NumNumaNodes != 1 {
		t.Errorf("a host the lab does not know: shared %v, profiles %v, devices %v", shared, profiles, devices)
	}
}
