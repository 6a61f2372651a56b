package hostd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

const rootPassword = "root-s3cret"

// testLab serves labtest.Simulator (govmomi's VPX model) behind the host view: the simulator is vCenter, its hosts
// answer by name.
type testLab struct {
	sync.Mutex
	sdk *url.URL
	vc  *vim25.Client // vCenter, logged in
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	tl := &testLab{}
	model.Service.RegisterSDK(simulator.Map)
	server := httptest.NewTLSServer(Router(tl, http.HandlerFunc(model.Service.ServeSDK)))
	t.Cleanup(server.Close)
	tl.sdk, _ = url.Parse(server.URL + "/sdk")
	model.Service.Listen = &url.URL{User: url.UserPassword("lab", "s3cret")}
	sc := soap.NewClient(tl.sdk, true)
	vc, err := vim25.NewClient(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := labtest.LoginAs(t, vc, "lab", "s3cret"); err != nil {
		t.Fatal(err)
	}
	tl.vc = vc
	return tl
}

func (tl *testLab) HostNamed(name string) (types.ManagedObjectReference, bool) {
	for _, e := range simulator.Map.All("HostSystem") {
		if strings.ToLower(e.Entity().Name) == name {
			return e.(*simulator.HostSystem).Self, true
		}
	}
	return types.ManagedObjectReference{}, false
}

func (tl *testLab) Login() Login {
	return Login{ESXiUsername: "root", ESXiPassword: rootPassword, VCenterUsername: "lab", VCenterPassword: "s3cret"}
}

func (tl *testLab) About(a types.AboutInfo) types.AboutInfo {
	a.Version = "8.0.2"
	return a
}

// session is a client of a host's endpoint logged in as the host's root.
func (tl *testLab) session(t *testing.T, hostName string) *vim25.Client {
	t.Helper()
	c := labtest.HostClient(t, tl.sdk, hostName)
	if err := labtest.LoginAs(t, c, "root", rootPassword); err != nil {
		t.Fatal(err)
	}
	return c
}

// vm is the simulator's VM of that name.
func vm(t *testing.T, name string) *simulator.VirtualMachine {
	t.Helper()
	for _, e := range simulator.Map.All("VirtualMachine") {
		if e.Entity().Name == name {
			return e.(*simulator.VirtualMachine)
		}
	}
	t.Fatalf("no VM %s", name)
	return nil
}

// hostdID is a VM's id through its host: the number of vCenter's id.
func hostdID(ref types.ManagedObjectReference) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "VirtualMachine", Value: strings.TrimPrefix(ref.Value, "vm-")}
}

// A host's endpoint presents itself as ESXi does, with hostd's fixed inventory ids, and takes the host's root
// account only.
func TestServiceContent(t *testing.T) {
	tl := startLab(t)
	c := labtest.HostClient(t, tl.sdk, "DC0_H0")
	about := c.ServiceContent.About
	if about.ApiType != "HostAgent" || about.Name != "VMware ESXi" || about.ProductLineId != "embeddedEsx" ||
		about.Version != "8.0.2" {
		t.Errorf("about: got %s / %s / %s / %s, want HostAgent / VMware ESXi / embeddedEsx / 8.0.2", about.ApiType,
			about.Name, about.ProductLineId, about.Version)
	}
	if c.ServiceContent.RootFolder.Value != "ha-folder-root" || c.ServiceContent.CustomFieldsManager != nil {
		t.Errorf("service content: root %v, customFieldsManager %v", c.ServiceContent.RootFolder,
			c.ServiceContent.CustomFieldsManager)
	}
	if err := labtest.LoginAs(t, c, "lab", "s3cret"); !labtest.IsFault(err, "InvalidLogin") {
		t.Errorf("vCenter's account on the host: got %v, want InvalidLogin", err)
	}
	if err := labtest.LoginAs(t, c, "root", rootPassword); err != nil {
		t.Fatalf("root on the host: %v", err)
	}
	var root mo.Folder
	if err := property.DefaultCollector(c).RetrieveOne(context.Background(), c.ServiceContent.RootFolder,
		[]string{"childEntity"}, &root); err != nil {
		t.Fatal(err)
	}
	if len(root.ChildEntity) != 1 || root.ChildEntity[0].Value != "ha-datacenter" {
		t.Errorf("root folder's children: got %v, want [ha-datacenter]", root.ChildEntity)
	}
	var dc mo.Datacenter
	if err := property.DefaultCollector(c).RetrieveOne(context.Background(), root.ChildEntity[0],
		[]string{"vmFolder", "hostFolder"}, &dc); err != nil {
		t.Fatal(err)
	}
	if dc.VmFolder.Value != "ha-folder-vm" || dc.HostFolder.Value != "ha-folder-host" {
		t.Errorf("datacenter folders: got %v, %v", dc.VmFolder, dc.HostFolder)
	}
}

// The host view lists the host's own VMs only, by numeric ids, and the host as ha-host in its compute resource.
func TestShowsTheHostsOwnObjects(t *testing.T) {
	tl := startLab(t)
	own := vm(t, "DC0_C0_RP0_VM0")
	hostName := simulator.Map.Get(*own.Runtime.Host).(mo.Entity).Entity().Name
	c := tl.session(t, hostName)
	ctx := context.Background()
	v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "runtime.host", "resourcePool"}, &vms); err != nil {
		t.Fatal(err)
	}
	sort.Slice(vms, func(i, j int) bool { return vms[i].Name < vms[j].Name })
	if len(vms) != 1 || vms[0].Name != own.Name || vms[0].Self != hostdID(own.Self) ||
		vms[0].Runtime.Host.Value != "ha-host" || vms[0].ResourcePool.Value != "ha-root-pool" {
		t.Errorf("VMs through %s: got %+v, want only %s as %s on ha-host in ha-root-pool", hostName, vms, own.Name,
			hostdID(own.Self).Value)
	}
	var host mo.HostSystem
	ref := types.ManagedObjectReference{Type: "HostSystem", Value: "ha-host"}
	if err := property.DefaultCollector(c).RetrieveOne(ctx, ref, []string{"name", "parent"}, &host); err != nil {
		t.Fatal(err)
	}
	if host.Name != hostName || host.Parent.Type != "ComputeResource" || host.Parent.Value != "ha-compute-res" {
		t.Errorf("ha-host: name %q, parent %v", host.Name, host.Parent)
	}
	var cr mo.ComputeResource
	if err := property.DefaultCollector(c).RetrieveOne(ctx, *host.Parent, []string{"host", "name"}, &cr); err != nil {
		t.Fatal(err)
	}
	if len(cr.Host) != 1 || cr.Host[0].Value != "ha-host" || cr.Name != hostName {
		t.Errorf("ha-compute-res: hosts %v named %q, want [ha-host] (the cluster's other hosts left out) named %s",
			cr.Host, cr.Name, hostName)
	}
}

// A call on an object the host does not have fails as on ESXi, with ManagedObjectNotFound; vCenter's inventory
// methods with NotSupported.
func TestRefusesOtherHostsObjects(t *testing.T) {
	tl := startLab(t)
	c := tl.session(t, "DC0_H0")
	other := vm(t, "DC0_C0_RP0_VM0")
	_, err := methods.PowerOffVM_Task(context.Background(), c, &types.PowerOffVM_Task{This: hostdID(other.Self)})
	if !labtest.IsFault(err, "ManagedObjectNotFound") {
		t.Errorf("power off another host's VM: got %v, want ManagedObjectNotFound", err)
	}
	if other.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		t.Errorf("%s after the refused call: %s", other.Name, other.Runtime.PowerState)
	}
	vcenter := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	_, err = methods.AddCustomFieldDef(context.Background(), c, &types.AddCustomFieldDef{
		This: *vcenter.CustomFieldsManager, Name: "lab"})
	if !labtest.IsFault(err, "ManagedObjectNotFound") {
		t.Errorf("vCenter's custom fields manager through a host: got %v, want ManagedObjectNotFound", err)
	}
	_, err = methods.CreateClusterEx(context.Background(), c, &types.CreateClusterEx{
		This: types.ManagedObjectReference{Type: "Folder", Value: "ha-folder-host"}, Name: "lab"})
	if !labtest.IsFault(err, "NotSupported") {
		t.Errorf("a cluster created through a host: got %v, want NotSupported", err)
	}
	if clusters := simulator.Map.All("ClusterComputeResource"); len(clusters) != 1 {
		t.Errorf("clusters after the refused call: %d, want 1", len(clusters))
	}
}

// A change made through the host view is the change vCenter sees: the same objects answer both.
func TestChangeSeenThroughVCenter(t *testing.T) {
	tl := startLab(t)
	c := tl.session(t, "DC0_H0")
	own := vm(t, "DC0_H0_VM0")
	res, err := methods.PowerOffVM_Task(context.Background(), c, &types.PowerOffVM_Task{This: hostdID(own.Self)})
	if err != nil {
		t.Fatal(err)
	}
	if err := object.NewTask(c, res.Returnval).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got mo.VirtualMachine
	if err := property.DefaultCollector(tl.vc).RetrieveOne(context.Background(), own.Self, []string{"runtime.powerState"},
		&got); err != nil {
		t.Fatal(err)
	}
	if got.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		t.Errorf("%s through vCenter after a power off through the host: %s", own.Name, got.Runtime.PowerState)
	}
}

// A VM that vCenter keeps in a VM folder is, through its host, in ha-folder-vm, as every VM on ESXi.
func TestVMsInTheHostsVMFolder(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	dc, err := object.NewSearchIndex(tl.vc).FindByInventoryPath(ctx, "/DC0")
	if err != nil || dc == nil {
		t.Fatalf("DC0: %v %v", dc, err)
	}
	folders, err := object.NewDatacenter(tl.vc, dc.Reference()).Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := folders.VmFolder.CreateFolder(ctx, "F0")
	if err != nil {
		t.Fatal(err)
	}
	own := vm(t, "DC0_H0_VM0")
	task, err := sub.MoveInto(ctx, []types.ManagedObjectReference{own.Self})
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	c := tl.session(t, "DC0_H0")
	var got mo.VirtualMachine
	if err := property.DefaultCollector(c).RetrieveOne(ctx, hostdID(own.Self), []string{"parent"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Parent == nil || got.Parent.Value != "ha-folder-vm" {
		t.Errorf("parent of a VM in a vCenter folder: got %v, want ha-folder-vm", got.Parent)
	}
	var folder mo.Folder
	vmFolder := types.ManagedObjectReference{Type: "Folder", Value: "ha-folder-vm"}
	if err := property.DefaultCollector(c).RetrieveOne(ctx, vmFolder, []string{"childEntity"}, &folder); err != nil {
		t.Fatal(err)
	}
	if len(folder.ChildEntity) != 1 || folder.ChildEntity[0] != hostdID(own.Self) {
		t.Errorf("ha-folder-vm's children: got %v, want [%v]", folder.ChildEntity, hostdID(own.Self))
	}
}

// The datacenter is ha-datacenter through the host, by name and by inventory path.
func TestDatacenterName(t *testing.T) {
	tl := startLab(t)
	c := tl.session(t, "DC0_H0")
	ctx := context.Background()
	dc := types.ManagedObjectReference{Type: "Datacenter", Value: "ha-datacenter"}
	var got mo.Datacenter
	if err := property.DefaultCollector(c).RetrieveOne(ctx, dc, []string{"name"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "ha-datacenter" {
		t.Errorf("datacenter name through the host: %q", got.Name)
	}
	found, err := methods.FindByInventoryPath(ctx, c, &types.FindByInventoryPath{This: *c.ServiceContent.SearchIndex,
		InventoryPath: "ha-datacenter/vm"})
	if err != nil {
		t.Fatal(err)
	}
	if found.Returnval == nil || found.Returnval.Value != "ha-folder-vm" {
		t.Errorf("FindByInventoryPath(ha-datacenter/vm): got %v, want ha-folder-vm", found.Returnval)
	}
	vcDC, err := object.NewSearchIndex(tl.vc).FindByInventoryPath(ctx, "/DC0")
	if err != nil || vcDC == nil {
		t.Errorf("the datacenter through vCenter is no longer DC0: %v %v", vcDC, err)
	}
}
