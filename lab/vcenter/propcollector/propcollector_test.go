package propcollector

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/labtest"
	"vcsim/topology"
	"vcsim/vgputypes"
)

// testLab is govmomi's own simulator (labtest.Simulator: cluster DC0_C0 of two hosts, standalone host DC0_H0, a VM
// in each) with the lab's property collector in place and a client logged in.
type testLab struct {
	c       *govmomi.Client
	vm      *simulator.VirtualMachine
	cluster *simulator.ClusterComputeResource
	hosts   []*simulator.HostSystem // the cluster's
	single  types.ManagedObjectReference
}

func startTestLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	Install()
	tl := &testLab{}
	for _, obj := range simulator.Map.All("ClusterComputeResource") {
		tl.cluster = obj.(*simulator.ClusterComputeResource)
	}
	for _, ref := range tl.cluster.Host {
		tl.hosts = append(tl.hosts, simulator.Map.Get(ref).(*simulator.HostSystem))
	}
	for _, obj := range simulator.Map.All("ComputeResource") {
		tl.single = obj.Reference()
	}
	tl.vm = simulator.Map.All("VirtualMachine")[0].(*simulator.VirtualMachine)
	tl.c = labtest.Serve(t, model, nil)
	return tl
}

// fetch is labtest.Fetch on the test's client.
func (tl *testLab) fetch(t *testing.T, ref types.ManagedObjectReference, prop string) (types.AnyType, error) {
	t.Helper()
	return labtest.Fetch(t, tl.c.Client, ref, prop)
}

// Fetch answers an unset property unset (the simulator's own Fetch panics there), a set one with its value, an
// unknown one with the fault RetrievePropertiesEx gives, and passes ServiceInstance.content and references by a
// supertype on to the simulator.
func TestFetch(t *testing.T) {
	tl := startTestLab(t)
	vm := tl.vm.Reference()
	for _, prop := range []string{"snapshot", "parentVApp"} {
		if value, err := tl.fetch(t, vm, prop); err != nil || value != nil {
			t.Errorf("Fetch %s: got %v, %v; want unset", prop, value, err)
		}
	}
	if name, err := tl.fetch(t, vm, "name"); err != nil || name != tl.vm.Name {
		t.Errorf("Fetch name: got %v, %v; want %s", name, err, tl.vm.Name)
	}
	if _, err := tl.fetch(t, vm, "noSuchProperty"); !labtest.IsFault(err, "InvalidProperty") {
		t.Errorf("Fetch of an unknown property: got %v, want InvalidProperty", err)
	}
	gone := types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-999"}
	if _, err := tl.fetch(t, gone, "name"); !labtest.IsFault(err, "ManagedObjectNotFound") {
		t.Errorf("Fetch of an object that does not exist: got %v, want ManagedObjectNotFound", err)
	}

	content, err := tl.fetch(t, vim25.ServiceInstance, "content")
	if sc, ok := content.(types.ServiceContent); err != nil || !ok || sc.PropertyCollector != tl.c.ServiceContent.PropertyCollector {
		t.Errorf("Fetch ServiceInstance.content: got %T %v, %v", content, content, err)
	}
	entity := types.ManagedObjectReference{Type: "ManagedEntity", Value: vm.Value}
	if name, err := tl.fetch(t, entity, "name"); err != nil || name != tl.vm.Name {
		t.Errorf("Fetch of a VM referenced as a ManagedEntity: got %v, %v", name, err)
	}
}

// The properties of vSphere 8.0.2 that the simulator's types predate: configManagerEnabled of a cluster and of a
// standalone host's compute resource, a cluster's summaryEx; a host has neither.
func TestFetchNewerProperties(t *testing.T) {
	tl := startTestLab(t)
	for _, ref := range []types.ManagedObjectReference{tl.cluster.Self, tl.single} {
		if enabled, err := tl.fetch(t, ref, "configManagerEnabled"); err != nil || enabled != false {
			t.Errorf("Fetch %s.configManagerEnabled: got %v, %v; want false", ref, enabled, err)
		}
	}
	summary, err := tl.fetch(t, tl.cluster.Self, "summaryEx")
	if s, ok := summary.(types.ClusterComputeResourceSummary); err != nil || !ok || s.NumHosts != int32(len(tl.hosts)) {
		t.Errorf("Fetch summaryEx: got %T %+v, %v; want the cluster's summary of %d hosts", summary, summary, err, len(tl.hosts))
	}
	if _, err := tl.fetch(t, tl.hosts[0].Self, "configManagerEnabled"); !labtest.IsFault(err, "InvalidProperty") {
		t.Errorf("Fetch of a host's configManagerEnabled: got %v, want InvalidProperty", err)
	}
	if _, err := tl.fetch(t, tl.single, "summaryEx"); !labtest.IsFault(err, "InvalidProperty") {
		t.Errorf("Fetch of a standalone compute resource's summaryEx: got %v, want InvalidProperty", err)
	}
}

// rawCall is a property collector call whose answer is kept as the XML the server wrote: a Go client decodes
// property values into govmomi's types, which have no vgpuMode.
type rawCall struct {
	Ex     *types.RetrievePropertiesEx `xml:"urn:vim25 RetrievePropertiesEx,omitempty"`
	Old    *types.RetrieveProperties   `xml:"urn:vim25 RetrieveProperties,omitempty"`
	Fetch  *labtest.FetchRequest       `xml:"urn:vim25 Fetch,omitempty"`
	ExRes  *rawXML                     `xml:"urn:vim25 RetrievePropertiesExResponse,omitempty"`
	OldRes *rawXML                     `xml:"urn:vim25 RetrievePropertiesResponse,omitempty"`
	Fetch_ *rawXML                     `xml:"urn:vim25 FetchResponse,omitempty"`
	Fault_ *soap.Fault                 `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

type rawXML struct {
	XML string `xml:",innerxml"`
}

func (b *rawCall) Fault() *soap.Fault { return b.Fault_ }

// raw answers the XML of the call's response.
func (tl *testLab) raw(t *testing.T, call *rawCall) string {
	t.Helper()
	if err := tl.c.Client.RoundTrip(context.Background(), call, call); err != nil {
		t.Fatal(err)
	}
	for _, res := range []*rawXML{call.ExRes, call.OldRes, call.Fetch_} {
		if res != nil {
			return res.XML
		}
	}
	t.Fatal("no response")
	return ""
}

func (tl *testLab) retrieve(t *testing.T, ex bool, ref types.ManagedObjectReference, props ...string) string {
	t.Helper()
	spec := []types.PropertyFilterSpec{{
		PropSet:   []types.PropertySpec{{Type: ref.Type, PathSet: props}},
		ObjectSet: []types.ObjectSpec{{Obj: ref}},
	}}
	pc := tl.c.ServiceContent.PropertyCollector
	if ex {
		return tl.raw(t, &rawCall{Ex: &types.RetrievePropertiesEx{This: pc, SpecSet: spec}})
	}
	return tl.raw(t, &rawCall{Old: &types.RetrieveProperties{This: pc, SpecSet: spec}})
}

// The graphics properties of a host with the lab's GPUs and of its graphics manager come with the lab's types
// (vgpuMode in each GPU's graphicsInfo and in each configured device type), through RetrievePropertiesEx,
// RetrieveProperties and Fetch; a host without the lab's graphics manager keeps govmomi's types.
func TestGraphicsPropertiesCarryVgpuMode(t *testing.T) {
	tl := startTestLab(t)
	host := tl.hosts[0]
	h := gpu.NewHost(nil, host.Self, host.Name, []*topology.GPUSpec{{Model: "P40", Count: 2}}, labtest.Catalog(t))
	if f := h.UpdateConfig(vgputypes.HostGraphicsConfig{HostDefaultGraphicsType: gpu.GraphicsShared,
		DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: h.GPUs[0].PciID,
			GraphicsType: gpu.GraphicsSharedDirect, VgpuMode: vgputypes.ModeSameSize}}}); f != nil {
		t.Fatal(f)
	}
	h.ApplyConfig()
	m := gpu.NewGraphicsManager(h)
	simulator.Map.Put(m)
	host.ConfigManager.GraphicsManager = &m.Self

	gpuInfo := []string{`type="ArrayOfHostGraphicsInfo"`, "<graphicsType>sharedDirect</graphicsType><vgpuMode>sameSize</vgpuMode>",
		"<graphicsType>shared</graphicsType><vgpuMode>none</vgpuMode>"}
	config := []string{"<deviceType><deviceId>" + h.GPUs[0].PciID + "</deviceId><graphicsType>sharedDirect</graphicsType><vgpuMode>sameSize</vgpuMode>"}
	for _, ex := range []bool{true, false} {
		for _, c := range []struct {
			ref   types.ManagedObjectReference
			props []string
			want  []string
		}{
			{m.Self, []string{"graphicsInfo"}, gpuInfo},
			{m.Self, []string{"graphicsConfig"}, config},
			{host.Self, []string{"config.graphicsInfo"}, gpuInfo},
			{host.Self, []string{"config.graphicsConfig"}, config},
			{host.Self, []string{"config"}, append([]string{`type="HostConfigInfo"`, "<vgpuMode>sameSize</vgpuMode>"}, config...)},
		} {
			got := tl.retrieve(t, ex, c.ref, c.props...)
			for _, want := range c.want {
				if !strings.Contains(got, want) {
					t.Errorf("RetrieveProperties (Ex %v) %s %v lacks %s:\n%s", ex, c.ref, c.props, want, got)
				}
			}
		}
	}
	got := tl.raw(t, &rawCall{Fetch: &labtest.FetchRequest{This: m.Self, Prop: "graphicsInfo"}})
	if !strings.Contains(got, gpuInfo[1]) {
		t.Errorf("Fetch graphicsInfo lacks %s:\n%s", gpuInfo[1], got)
	}

	// The other host of the cluster has no lab GPUs: its properties are the simulator's.
	if got := tl.retrieve(t, true, tl.hosts[1].Self, "config"); !strings.Contains(got, `type="HostConfigInfo"`) ||
		strings.Contains(got, "vgpuMode") {
		t.Errorf("a host without the lab's graphics manager: %s", got)
	}
}
