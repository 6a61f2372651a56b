package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/vpx"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/clusters"
	"vcsim/datastores"
	"vcsim/dvs"
	"vcsim/envbrowser"
	"vcsim/gpu"
	"vcsim/guestnet"
	"vcsim/hostnet"
	"vcsim/propcollector"
	"vcsim/settings"
	"vcsim/simobj"
	"vcsim/topology"
	"vcsim/vapi"
	"vcsim/vcmanagers"
	"vcsim/vlcm"
)

const (
	vmNetwork  = "VM Network"
	diskSizeKB = 40 * 1024 * 1024
)

// Build creates the topology's inventory in an empty simulator (no DC0, no default hosts or VMs) and wraps the
// objects that get GPU behaviour. dataDir holds the datastores' files.
func (l *Lab) Build(model *simulator.Model, topo *topology.Topology, dataDir string) error {
	propcollector.Install()
	vcmanagers.InstallScheduledTaskManager()
	dvs.InstallManager()
	ctx := context.Background()
	c, err := vim25.NewClient(ctx, model.Service)
	if err != nil {
		return err
	}
	l.datastores = datastores.New(datastoreLab{labView{l}}, dataDir, topo.NFSExports)
	l.guestAddresses = guestnet.New(topo)
	root := object.NewRootFolder(c)
	for _, spec := range topo.Datacenters {
		if err := l.buildDatacenter(ctx, c, root, spec, dataDir); err != nil {
			return fmt.Errorf("datacenter %s: %v", spec.Name, err)
		}
	}
	l.ctx = simobj.Context(ctx)
	l.wrapSimulatorObjects()
	simulator.Map.AddHandler(newTaskHooks(l))
	l.tasks = vapi.NewTasks(&l.mu, &l.background)
	l.vlcm = vlcm.New(vlcmLab{l}, &l.mu, l.tasks, topo)
	return l.seedTags(topo)
}

func (l *Lab) buildDatacenter(ctx context.Context, c *vim25.Client, root *object.Folder, spec *topology.DatacenterSpec,
	dataDir string) error {
	dc, err := root.CreateDatacenter(ctx, spec.Name)
	if err != nil {
		return err
	}
	l.datacenters = append(l.datacenters, dc.Reference())
	folders, err := dc.Folders(ctx)
	if err != nil {
		return err
	}
	hosts := map[string]*object.HostSystem{}
	for _, cs := range spec.Clusters {
		cluster, err := folders.HostFolder.CreateCluster(ctx, cs.Name, types.ClusterConfigSpecEx{})
		if err != nil {
			return fmt.Errorf("cluster %s: %v", cs.Name, err)
		}
		ref := rekey(cluster.Reference(), "domain-c")
		cluster = object.NewClusterComputeResource(c, ref)
		l.clusters = append(l.clusters, ref)
		simCluster := simulator.Map.Get(ref).(*simulator.ClusterComputeResource)
		cfg := simCluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
		clusters.FillDefaults(cfg)
		cfg.DrsConfig = clusters.DRSConfig(cs.DRS)
		cfg.DpmConfigInfo = clusters.DPMConfig(cs.DPM)
		clusters.SyncLegacyConfiguration(simCluster)
		for _, hs := range cs.Hosts {
			spec := types.HostConnectSpec{HostName: hs.Name}
			if hosts[hs.Name], err = l.addHost(ctx, c, hs, func() (*object.Task, error) {
				return cluster.AddHost(ctx, spec, true, nil, nil)
			}); err != nil {
				return err
			}
		}
	}
	for _, hs := range spec.Hosts {
		connect := types.HostConnectSpec{HostName: hs.Name}
		if hosts[hs.Name], err = l.addHost(ctx, c, hs, func() (*object.Task, error) {
			return folders.HostFolder.AddStandaloneHost(ctx, connect, true, nil, nil)
		}); err != nil {
			return err
		}
		rekey(*l.hostObject(hosts[hs.Name].Reference()).Parent, "domain-s")
	}
	if len(hosts) == 0 {
		return nil
	}
	datastore := spec.Name + "-ds"
	dir := filepath.Join(dataDir, spec.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var members []*object.HostSystem
	for _, hs := range spec.AllHosts() {
		members = append(members, hosts[hs.Name])
	}
	if err := l.datastores.CreateShared(ctx, members, datastore, dir); err != nil {
		return err
	}
	for _, vs := range spec.VMs {
		if err := l.createVM(ctx, folders.VmFolder, hosts[vs.Host], datastore, vs); err != nil {
			return fmt.Errorf("VM %s: %v", vs.Name, err)
		}
	}
	return nil
}

// rekey gives a new compute resource the id vCenter would (domain-c<N> for a cluster, domain-s<N> for a standalone
// host) instead of the simulator's type-named id. Children point at the object's Self field, so they follow; the
// registry key, the parent folder's child list and the root pool's owner are updated here.
func rekey(ref types.ManagedObjectReference, prefix string) types.ManagedObjectReference {
	obj := simulator.Map.Get(ref).(mo.Entity)
	me := obj.Entity()
	next := types.ManagedObjectReference{Type: ref.Type, Value: prefix + ref.Value[strings.LastIndex(ref.Value, "-")+1:]}
	simulator.Map.Remove(ref)
	me.Self = next
	simulator.Map.Put(obj)
	folder := simulator.Map.Get(*me.Parent).(*simulator.Folder)
	for i := range folder.ChildEntity {
		if folder.ChildEntity[i] == ref {
			folder.ChildEntity[i] = next
		}
	}
	var pool *types.ManagedObjectReference
	switch cr := obj.(type) {
	case *simulator.ClusterComputeResource:
		pool = cr.ResourcePool
	case *mo.ComputeResource:
		pool = cr.ResourcePool
	}
	if p, ok := simulator.Map.Get(*pool).(*simulator.ResourcePool); ok {
		p.Owner = next
	}
	return next
}

// addHost connects a host through the given call and gives it its GPUs, graphics manager and service system.
func (l *Lab) addHost(ctx context.Context, c *vim25.Client, spec *topology.HostSpec,
	connect func() (*object.Task, error)) (*object.HostSystem, error) {
	task, err := connect()
	if err != nil {
		return nil, fmt.Errorf("host %s: %v", spec.Name, err)
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("host %s: %v", spec.Name, err)
	}
	ref := info.Result.(types.ManagedObjectReference)
	obj := l.hostObject(ref)
	h := newHostState(l, ref, spec.Name, spec.GPUs, l.catalog)
	h.linkGPUs(spec.NVLink)
	h.AddNVSwitches(spec.NVSwitches)
	h.rebindNeedsReboot, h.rebootDuration = spec.PassthroughNeedsReboot, spec.RebootDuration()
	hostnet.AddPhysicalNics(obj, spec.NICs)
	l.attachHost(h, obj)
	return object.NewHostSystem(c, ref), nil
}

func (l *Lab) createVM(ctx context.Context, folder *object.Folder, host *object.HostSystem, datastore string,
	spec *topology.VMSpec) error {
	pool, err := host.ResourcePool(ctx)
	if err != nil {
		return err
	}
	var devices object.VirtualDeviceList
	scsi, err := devices.CreateSCSIController("pvscsi")
	if err != nil {
		return err
	}
	devices = append(devices, scsi)
	disk := devices.CreateDisk(scsi.(types.BaseVirtualController), types.ManagedObjectReference{},
		fmt.Sprintf("[%s] %s/%s.vmdk", datastore, spec.Name, spec.Name))
	disk.CapacityInKB = diskSizeKB
	nic, err := devices.CreateEthernetCard("vmxnet3", &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: vmNetwork},
	})
	if err != nil {
		return err
	}
	devices = append(devices, disk, nic)
	changes, err := devices.ConfigSpec(types.VirtualDeviceConfigSpecOperationAdd)
	if err != nil {
		return err
	}
	for _, change := range changes {
		if c := change.GetVirtualDeviceConfigSpec(); c.Device == types.BaseVirtualDevice(disk) {
			c.FileOperation = types.VirtualDeviceConfigSpecFileOperationCreate
		}
	}
	config := types.VirtualMachineConfigSpec{
		Name:         spec.Name,
		GuestId:      spec.GuestID,
		Firmware:     spec.Firmware,
		NumCPUs:      int32(spec.CPUs),
		MemoryMB:     int64(spec.MemoryMB),
		Files:        &types.VirtualMachineFileInfo{VmPathName: "[" + datastore + "]"},
		DeviceChange: changes,
	}
	task, err := folder.CreateVM(ctx, config, pool, host)
	if err != nil {
		return err
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		return err
	}
	ref := info.Result.(types.ManagedObjectReference)
	vm := object.NewVirtualMachine(folder.Client(), ref)
	if spec.PowerState == string(types.VirtualMachinePowerStatePoweredOn) {
		task, err := vm.PowerOn(ctx)
		if err == nil {
			err = task.Wait(ctx)
		}
		if err != nil {
			return err
		}
	}
	l.vm(ref) // adopt
	return nil
}

// wrapSimulatorObjects replaces the simulator's vCenter settings and environment browsers by the lab's.
func (l *Lab) wrapSimulatorObjects() {
	om := simulator.Map.OptionManager()
	l.settings = settings.NewManager(om, settings.VCenterOptions, false)
	simulator.Map.Put(l.settings)
	if auth, ok := simulator.Map.Get(*vpx.ServiceContent.AuthorizationManager).(*simulator.AuthorizationManager); ok {
		simulator.Map.Put(vcmanagers.NewAuthorizationManager(auth))
	}
	for _, ref := range l.clusters {
		cluster := simulator.Map.Get(ref).(*simulator.ClusterComputeResource)
		l.wrapBrowser(*cluster.EnvironmentBrowser, ref)
	}
	for _, h := range l.hosts {
		if cr, _, _ := computeResource(l.hostObject(h.Ref)); cr.Type == "ComputeResource" {
			l.wrapBrowser(*environmentBrowserOf(cr), cr)
		}
	}
}

func (l *Lab) wrapBrowser(ref, owner types.ManagedObjectReference) {
	if b, ok := simulator.Map.Get(ref).(*simulator.EnvironmentBrowser); ok {
		simulator.Map.Put(envbrowser.New(b, envBrowserLab{l}, owner))
	}
}

// envBrowserLab is the lab as package envbrowser sees it (envbrowser.Lab).
type envBrowserLab struct{ l *Lab }

func (e envBrowserLab) GPUHosts(refs []types.ManagedObjectReference) []*gpu.Host {
	var hosts []*gpu.Host
	for _, ref := range refs {
		if h := e.l.host(ref); h != nil {
			hosts = append(hosts, h.Host)
		}
	}
	return hosts
}
