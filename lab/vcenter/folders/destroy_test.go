package folders

import (
	"context"
	"os"
	"path"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

func callUnregisterAndDestroy(ctx context.Context, f *object.Folder) error {
	res, err := methods.UnregisterAndDestroy_Task(ctx, f.Client(), &types.UnregisterAndDestroy_Task{This: f.Reference()})
	if err != nil {
		return err
	}
	return object.NewTask(f.Client(), res.Returnval).Wait(ctx)
}

// registered tells whether the simulator still holds the VM and its host lists it.
func registered(vm *simulator.VirtualMachine) (inRegistry, onHost bool) {
	host := simulator.Map.Get(*vm.Runtime.Host).(*simulator.HostSystem)
	for _, ref := range host.Vm {
		onHost = onHost || ref == vm.Self
	}
	return simulator.Map.Get(vm.Self) != nil, onHost
}

// vmxFile is where the simulator keeps a VM's configuration file.
func vmxFile(t *testing.T, vm *simulator.VirtualMachine) string {
	t.Helper()
	var p object.DatastorePath
	if !p.FromString(vm.Config.Files.VmPathName) {
		t.Fatalf("VM path %q", vm.Config.Files.VmPathName)
	}
	ds := simulator.Map.Get(vm.Datastore[0]).(*simulator.Datastore)
	file := path.Join(ds.Info.GetDatastoreInfo().Url, p.Path)
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	return file
}

// UnregisterAndDestroy_Task on a VM folder takes the VMs below it out of the inventory (their files stay) and
// removes it with its subfolders; a powered-on VM in a subfolder refuses it before any VM goes.
func TestUnregisterAndDestroy(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	dc := object.NewDatacenter(tl.c.Client, tl.dc.Self)
	folders, err := dc.Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := folders.VmFolder.CreateFolder(ctx, "outer")
	if err != nil {
		t.Fatal(err)
	}
	inner, err := outer.CreateFolder(ctx, "inner")
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(tl.c.Client, false).SetDatacenter(dc)
	off, err := finder.VirtualMachine(ctx, "DC0_C0_RP0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	on, err := finder.VirtualMachine(ctx, "DC0_H0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	task, err := off.PowerOff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, move := range []struct {
		folder *object.Folder
		vm     *object.VirtualMachine
	}{{outer, off}, {inner, on}} {
		task, err := move.folder.MoveInto(ctx, []types.ManagedObjectReference{move.vm.Reference()})
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	vms := []*simulator.VirtualMachine{tl.VM(off.Reference()), tl.VM(on.Reference())}
	files := []string{vmxFile(t, vms[0]), vmxFile(t, vms[1])}

	err = callUnregisterAndDestroy(ctx, outer)
	if err == nil || err.Error() != "The operation is not allowed in the current state." {
		t.Fatalf("with a powered-on VM in a subfolder: got %v, want InvalidState with vCenter's message", err)
	}
	for _, vm := range vms {
		if inRegistry, onHost := registered(vm); !inRegistry || !onHost {
			t.Errorf("after the refused call %s: in the inventory %v, on its host %v; want both", vm.Name, inRegistry,
				onHost)
		}
	}
	for _, p := range []string{"/DC0/vm/outer", "/DC0/vm/outer/inner"} {
		if _, err := finder.Folder(ctx, p); err != nil {
			t.Errorf("after the refused call: %v", err)
		}
	}

	if task, err = on.PowerOff(ctx); err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := callUnregisterAndDestroy(ctx, outer); err != nil {
		t.Fatalf("on a folder of powered-off VMs: %v", err)
	}
	for i, vm := range vms {
		if inRegistry, onHost := registered(vm); inRegistry || onHost {
			t.Errorf("after unregistering %s: in the inventory %v, on its host %v; want neither", vm.Name, inRegistry,
				onHost)
		}
		if _, err := os.Stat(files[i]); err != nil {
			t.Errorf("the files of %s went: %v", vm.Name, err)
		}
	}
	for _, f := range []*object.Folder{outer, inner} {
		if simulator.Map.Get(f.Reference()) != nil {
			t.Errorf("folder %s is still in the inventory", f.Reference().Value)
		}
	}
	var vmFolder mo.Folder
	if err := folders.VmFolder.Properties(ctx, folders.VmFolder.Reference(), []string{"childEntity"},
		&vmFolder); err != nil {
		t.Fatal(err)
	}
	for _, child := range vmFolder.ChildEntity {
		if child == outer.Reference() {
			t.Errorf("the datacenter's vm folder still lists %s", child.Value)
		}
	}
}

// A folder that is not a VM folder (a host folder below the datacenter's, the datacenter's own host and network
// folders, the root folder), a datacenter's own vm folder and a folder holding a vApp are NotSupported, an
// object that is no folder ManagedObjectNotFound; each leaves the inventory as it was.
func TestUnregisterAndDestroyRefused(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	folders, err := object.NewDatacenter(tl.c.Client, tl.dc.Self).Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	withVApp, err := folders.VmFolder.CreateFolder(ctx, "with-vapp")
	if err != nil {
		t.Fatal(err)
	}
	hostSub, err := folders.HostFolder.CreateFolder(ctx, "hosts")
	if err != nil {
		t.Fatal(err)
	}
	pool := simulator.Map.Any("ResourcePool").(*simulator.ResourcePool)
	res := pool.CreateVApp(&types.CreateVApp{This: pool.Self, Name: "vapp", ResSpec: types.DefaultResourceConfigSpec(),
		ConfigSpec: types.VAppConfigSpec{}}).(*methods.CreateVAppBody)
	if res.Fault_ != nil {
		t.Fatal(res.Fault_)
	}
	folder := simulator.Map.Get(withVApp.Reference()).(*simulator.Folder)
	simulator.Map.AddReference(folder, &folder.ChildEntity, res.Res.Returnval) // the simulator does not file vApps
	count := len(simulator.Map.All("VirtualMachine")) + len(simulator.Map.All("Folder"))

	for _, f := range []*object.Folder{hostSub, folders.HostFolder, folders.NetworkFolder, folders.VmFolder,
		object.NewRootFolder(tl.c.Client), withVApp} {
		err := callUnregisterAndDestroy(ctx, f)
		if err == nil || err.Error() != "The operation is not supported on the object." {
			t.Errorf("on %s: got %v, want NotSupported with vCenter's message", f.Reference().Value, err)
		}
	}
	for _, ref := range []types.ManagedObjectReference{{Type: "Folder", Value: "group-v999"}, tl.dc.Self} {
		err := callUnregisterAndDestroy(ctx, object.NewFolder(tl.c.Client, ref))
		if !labtest.IsFault(err, "ManagedObjectNotFound") {
			t.Errorf("on %s, no folder: got %v, want ManagedObjectNotFound", ref.Value, err)
		}
	}
	if got := len(simulator.Map.All("VirtualMachine")) + len(simulator.Map.All("Folder")); got != count ||
		simulator.Map.Get(res.Res.Returnval) == nil {
		t.Errorf("after the refused calls the inventory holds %d VMs and folders, want %d, and the vApp", got, count)
	}
}
