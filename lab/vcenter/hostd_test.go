package main

import (
	"context"
	"net"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
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
)

const testESXiPassword = "root-s3cret"

// hostdClient is a client of a host's own endpoint: it dials the test server, with the host's name in the URL and
// so in the Host header, the way a client that resolved the host's name would.
func (tl *testLab) hostdClient(t *testing.T, hostName string) *vim25.Client {
	t.Helper()
	tl.Lab.hostdLogin = hostdLogin{"root", testESXiPassword, "lab", "s3cret"}
	u := url.URL{Scheme: "https", Host: net.JoinHostPort(hostName, tl.sdk.Port()), Path: "/sdk"}
	sc := soap.NewClient(&u, true)
	sc.DefaultTransport().DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, tl.sdk.Host)
	}
	c, err := vim25.NewClient(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostdSession is a client of a host's endpoint logged in as the host's root.
func (tl *testLab) hostdSession(t *testing.T, hostName string) *vim25.Client {
	t.Helper()
	c := tl.hostdClient(t, hostName)
	if err := hostdLoginAs(t, c, "root", testESXiPassword); err != nil {
		t.Fatal(err)
	}
	return c
}

// hostdHost reads properties of ha-host through a host's endpoint.
func hostdHost(t *testing.T, c *vim25.Client, props ...string) mo.HostSystem {
	t.Helper()
	var host mo.HostSystem
	ref := types.ManagedObjectReference{Type: "HostSystem", Value: "ha-host"}
	if err := property.DefaultCollector(c).RetrieveOne(context.Background(), ref, props, &host); err != nil {
		t.Fatal(err)
	}
	return host
}

func hostdLoginAs(t *testing.T, c *vim25.Client, user, password string) error {
	t.Helper()
	_, err := methods.Login(context.Background(), c, &types.Login{This: *c.ServiceContent.SessionManager,
		UserName: user, Password: password})
	return err
}

// A host's endpoint presents itself as ESXi does, with hostd's fixed inventory ids, and takes the host's root
// account only.
func TestHostdServiceContent(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdClient(t, "esxi-01")
	about := c.ServiceContent.About
	if about.ApiType != "HostAgent" || about.Name != "VMware ESXi" || about.ProductLineId != "embeddedEsx" {
		t.Errorf("about: got %s / %s / %s, want HostAgent / VMware ESXi / embeddedEsx", about.ApiType, about.Name,
			about.ProductLineId)
	}
	if c.ServiceContent.RootFolder.Value != "ha-folder-root" || c.ServiceContent.CustomFieldsManager != nil {
		t.Errorf("service content: root %v, customFieldsManager %v", c.ServiceContent.RootFolder,
			c.ServiceContent.CustomFieldsManager)
	}
	if err := hostdLoginAs(t, c, "lab", "s3cret"); !isFault(err, "InvalidLogin") {
		t.Errorf("vCenter's account on the host: got %v, want InvalidLogin", err)
	}
	if err := hostdLoginAs(t, c, "root", testESXiPassword); err != nil {
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
func TestHostdShowsTheHostsOwnObjects(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
	ctx := context.Background()
	vms := containerContents(t, c, "VirtualMachine", []string{"name", "runtime.host", "resourcePool"})
	var names []string
	for _, vm := range vms {
		names = append(names, vm.Name)
		if vm.Runtime.Host.Value != "ha-host" || vm.ResourcePool.Value != "ha-root-pool" {
			t.Errorf("%s: host %v, pool %v, want ha-host, ha-root-pool", vm.Name, vm.Runtime.Host, vm.ResourcePool)
		}
		if vm.Self.Value != hostNumber(tl.vmNamed(t, vm.Name)) {
			t.Errorf("%s: id %q, want the number of vCenter's id", vm.Name, vm.Self.Value)
		}
	}
	if len(names) != 1 || names[0] != "vm-1" {
		t.Errorf("VMs through esxi-01: got %v, want [vm-1]", names)
	}
	var host mo.HostSystem
	ref := types.ManagedObjectReference{Type: "HostSystem", Value: "ha-host"}
	if err := property.DefaultCollector(c).RetrieveOne(ctx, ref, []string{"name", "parent"}, &host); err != nil {
		t.Fatal(err)
	}
	if host.Name != "esxi-01" || host.Parent.Type != "ComputeResource" || host.Parent.Value != "ha-compute-res" {
		t.Errorf("ha-host: name %q, parent %v", host.Name, host.Parent)
	}
	var cr mo.ComputeResource
	if err := property.DefaultCollector(c).RetrieveOne(ctx, *host.Parent, []string{"host"}, &cr); err != nil {
		t.Fatal(err)
	}
	if len(cr.Host) != 1 || cr.Host[0].Value != "ha-host" {
		t.Errorf("ha-compute-res hosts: got %v, want [ha-host] (the cluster's other hosts left out)", cr.Host)
	}
}

// A call on an object the host does not have fails as on ESXi, with ManagedObjectNotFound.
func TestHostdRefusesOtherHostsObjects(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
	other := tl.vmNamed(t, "vm-2")
	other.Value = hostNumber(other)
	_, err := methods.PowerOnVM_Task(context.Background(), c, &types.PowerOnVM_Task{This: other})
	if !isFault(err, "ManagedObjectNotFound") {
		t.Errorf("power on another host's VM: got %v, want ManagedObjectNotFound", err)
	}
	if got := tl.state(t).VMs[1].PowerState; got != "poweredOff" {
		t.Errorf("vm-2 after the refused call: %s", got)
	}
	vcenter := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	_, err = methods.AddCustomFieldDef(context.Background(), c, &types.AddCustomFieldDef{
		This: *vcenter.CustomFieldsManager, Name: "lab"})
	if !isFault(err, "ManagedObjectNotFound") {
		t.Errorf("vCenter's custom fields manager through a host: got %v, want ManagedObjectNotFound", err)
	}
	_, err = methods.CreateClusterEx(context.Background(), c, &types.CreateClusterEx{
		This: types.ManagedObjectReference{Type: "Folder", Value: "ha-folder-host"}, Name: "lab"})
	if !isFault(err, "NotSupported") {
		t.Errorf("a cluster created through a host: got %v, want NotSupported", err)
	}
	if len(tl.state(t).Clusters) != 1 {
		t.Errorf("clusters after the refused call: %d, want 1", len(tl.state(t).Clusters))
	}
}

// A change made through the host view is the change vCenter sees: the same objects answer both.
func TestHostdChangeSeenThroughVCenter(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
	vm := tl.vmNamed(t, "vm-1")
	res, err := methods.PowerOnVM_Task(context.Background(), c, &types.PowerOnVM_Task{
		This: types.ManagedObjectReference{Type: "VirtualMachine", Value: hostNumber(vm)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := object.NewTask(c, res.Returnval).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := tl.state(t).VMs[0].PowerState; got != "poweredOn" {
		t.Errorf("vm-1 in /lab/state after a power on through the host: %s", got)
	}
}

func containerContents(t *testing.T, c *vim25.Client, kind string, props []string) []mo.VirtualMachine {
	t.Helper()
	ctx := context.Background()
	v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{kind}, true)
	if err != nil {
		t.Fatal(err)
	}
	var out []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{kind}, props, &out); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (tl *testLab) vmNamed(t *testing.T, name string) types.ManagedObjectReference {
	t.Helper()
	for _, ref := range tl.vms {
		if vm := tl.vm(ref); vm != nil && vm.Name == name {
			return ref
		}
	}
	t.Fatalf("no VM %s", name)
	return types.ManagedObjectReference{}
}

func isFault(err error, kind string) bool {
	if err == nil || !soap.IsSoapFault(err) {
		return false
	}
	fault := soap.ToSoapFault(err).VimFault()
	return fault != nil && reflect.TypeOf(fault).Name() == kind
}

// A VM that vCenter keeps in a VM folder is, through its host, in ha-folder-vm, as every VM on ESXi.
func TestHostdVMsInTheHostsVMFolder(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	vc, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	dc := object.NewDatacenter(vc.Client, tl.datacenters[0])
	folders, err := dc.Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := folders.VmFolder.CreateFolder(ctx, "F0")
	if err != nil {
		t.Fatal(err)
	}
	vm := tl.vmNamed(t, "vm-1")
	if err := waitTask(sub.MoveInto(ctx, []types.ManagedObjectReference{vm})); err != nil {
		t.Fatal(err)
	}
	c := tl.hostdSession(t, "esxi-01")
	var got mo.VirtualMachine
	hostdVM := types.ManagedObjectReference{Type: "VirtualMachine", Value: hostNumber(vm)}
	if err := property.DefaultCollector(c).RetrieveOne(ctx, hostdVM, []string{"parent"}, &got); err != nil {
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
	if len(folder.ChildEntity) != 1 || folder.ChildEntity[0] != hostdVM {
		t.Errorf("ha-folder-vm's children: got %v, want [%v]", folder.ChildEntity, hostdVM)
	}
}

// The host's auto-start configuration changes through the host view and reads back through vCenter, as the host's
// config.autoStart; a start order already taken moves the other VM one place later.
func TestAutoStartThroughTheHost(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
	ctx := context.Background()
	host := hostdHost(t, c, "configManager.autoStartManager", "vm")
	manager := *host.ConfigManager.AutoStartManager
	vm := host.Vm[0]
	entry := types.AutoStartPowerInfo{Key: vm, StartAction: "powerOn", StartOrder: 1, StartDelay: -1,
		StopAction: "systemDefault", StopDelay: -1, WaitForHeartbeat: "systemDefault"}
	spec := types.HostAutoStartManagerConfig{Defaults: &types.AutoStartDefaults{Enabled: types.NewBool(true),
		StartDelay: 200, StopAction: "guestShutdown"}, PowerInfo: []types.AutoStartPowerInfo{entry}}
	if _, err := methods.ReconfigureAutostart(ctx, c, &types.ReconfigureAutostart{This: manager, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	bad := spec
	bad.PowerInfo = []types.AutoStartPowerInfo{entry}
	bad.PowerInfo[0].StartOrder = 0
	_, err := methods.ReconfigureAutostart(ctx, c, &types.ReconfigureAutostart{This: manager, Spec: bad})
	if !isFault(err, "InvalidArgument") {
		t.Errorf("start order 0: got %v, want InvalidArgument", err)
	}

	vc, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var seen mo.HostSystem
	if err := property.DefaultCollector(vc.Client).RetrieveOne(ctx, tl.hosts[0].ref, []string{"config.autoStart"},
		&seen); err != nil {
		t.Fatal(err)
	}
	got := seen.Config.AutoStart
	if got == nil || got.Defaults == nil || !*got.Defaults.Enabled || got.Defaults.StartDelay != 200 ||
		got.Defaults.StopDelay != 120 || got.Defaults.StopAction != "guestShutdown" {
		t.Fatalf("config.autoStart through vCenter: %+v", got)
	}
	want := tl.vmNamed(t, "vm-1")
	if len(got.PowerInfo) != 1 || got.PowerInfo[0].Key != want || got.PowerInfo[0].StartOrder != 1 {
		t.Errorf("powerInfo through vCenter: %+v, want vm-1 first", got.PowerInfo)
	}
}

func TestAutoStartOrderCollisions(t *testing.T) {
	vm := func(n string) types.ManagedObjectReference {
		return types.ManagedObjectReference{Type: "VirtualMachine", Value: n}
	}
	entry := func(n string, order int32) types.AutoStartPowerInfo {
		return types.AutoStartPowerInfo{Key: vm(n), StartOrder: order, StartAction: "powerOn", StopAction: "none"}
	}
	var sequence []types.AutoStartPowerInfo
	for _, e := range []types.AutoStartPowerInfo{entry("a", 1), entry("b", 2), entry("any", -1), entry("c", 1)} {
		sequence = placeAutoStart(sequence, e)
	}
	var got []string
	for _, e := range sequence {
		got = append(got, e.Key.Value+":"+strconv.Itoa(int(e.StartOrder)))
	}
	if strings.Join(got, " ") != "c:1 a:2 b:3 any:-1" {
		t.Errorf("sequence: %v, want c first, a and b one place later, the any-time VM last", got)
	}
	removed := entry("a", -1)
	removed.StartAction = "none"
	if sequence = placeAutoStart(sequence, removed); len(sequence) != 3 || containsRef([]types.ManagedObjectReference{
		sequence[0].Key, sequence[1].Key, sequence[2].Key}, vm("a")) {
		t.Errorf("start and stop action none keep the VM in the sequence: %v", sequence)
	}
}

// The datacenter is ha-datacenter through the host, by name and by inventory path.
func TestHostdDatacenterName(t *testing.T) {
	tl := startLab(t)
	c := tl.hostdSession(t, "esxi-01")
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
	vc, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if err := vc.RetrieveOne(ctx, tl.datacenters[0], []string{"name"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "dc" {
		t.Errorf("the datacenter's name through vCenter changed: %q", got.Name)
	}
}
