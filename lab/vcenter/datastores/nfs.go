package datastores

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/soaphttp"
)

// NFS datastores (vSphere Web Services API, HostDatastoreSystem.CreateNasDatastore, HostNasVolumeSpec,
// NasDatastoreInfo; developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.host.DatastoreSystem.html).
// The lab's NFS servers are the exports its topology lists ("nfs_exports": ["server:/path"]); their files live under
// the lab's data directory. CreateNasDatastore on a host:
//   - mounts an export the lab serves as a datastore named spec.localPath, of type NFS or NFS41, read-only when
//     spec.accessMode is readOnly; vCenter keeps one Datastore object per export in a datacenter, so a second host
//     that mounts the same export under the same name mounts that object;
//   - refuses a name another datastore of the datacenter holds with DuplicateName, and an export or name the host
//     already mounts with AlreadyExists;
//   - fails for an export the lab does not serve as ESXi does when the server does not answer: PlatformConfigFault,
//     "Unable to connect to NFS server" (hostd's log of a failed NAS mount).
// Not modelled: NFS 4.1 multipath (remoteHostNames), Kerberos, and the mount failing for a path the server does
// not export while the server answers (here every unknown export fails the same way).

func nfsExportKey(server, path string) string { return server + ":" + path }

// serveCreateNasDatastore answers CreateNasDatastore; the simulator's would name the datastore after the last part
// of localPath and need that path to be a directory on the lab's machine.
func (d *Datastores) serveCreateNasDatastore(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	if call.Method != "CreateNasDatastore" {
		return false
	}
	method, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return false
	}
	req, ok := method.Body.(*types.CreateNasDatastore)
	if !ok {
		return false
	}
	host := hostOfDatastoreSystem(call.This)
	if host == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	ref, fault := d.mountNas(host, req.Spec)
	if fault != nil {
		soaphttp.WriteFault(w, fault.msg, fault.faultType, fault.detail)
		return true
	}
	soaphttp.WriteResponse(w, fmt.Sprintf(`<CreateNasDatastoreResponse xmlns="urn:vim25"><returnval type="Datastore">%s`+
		`</returnval></CreateNasDatastoreResponse>`, ref.Value))
	return true
}

// soapFault is a synchronous method's fault: its vim25 type, message and properties (XML).
type soapFault struct{ faultType, msg, detail string }

func hostOfDatastoreSystem(ref types.ManagedObjectReference) *simulator.HostSystem {
	for _, entity := range simulator.Map.All("HostSystem") {
		if host, ok := entity.(*simulator.HostSystem); ok && host.ConfigManager.DatastoreSystem != nil &&
			*host.ConfigManager.DatastoreSystem == ref {
			return host
		}
	}
	return nil
}

func (d *Datastores) mountNas(host *simulator.HostSystem, spec types.HostNasVolumeSpec) (types.ManagedObjectReference,
	*soapFault) {
	none := types.ManagedObjectReference{}
	name, export := spec.LocalPath, nfsExportKey(spec.RemoteHost, spec.RemotePath)
	if name == "" || spec.RemotePath == "" {
		return none, &soapFault{"InvalidArgument", "A specified parameter was not correct: spec",
			"<invalidProperty>spec</invalidProperty>"}
	}
	for _, ref := range host.Datastore {
		if ds, ok := simulator.Map.Get(ref).(*simulator.Datastore); ok && (ds.Name == name || nasExport(ds) == export) {
			return none, &soapFault{"AlreadyExists", fmt.Sprintf("The specified key, name, or identifier '%s' "+
				"already exists.", name), fmt.Sprintf("<name>%s</name>", xmlText(name))}
		}
	}
	dc, _ := simobj.Ancestor(host.Self, "Datacenter")
	var shared *simulator.Datastore
	if datacenter, ok := simulator.Map.Get(dc).(*simulator.Datacenter); ok {
		for _, ref := range datacenter.Datastore {
			ds, ok := simulator.Map.Get(ref).(*simulator.Datastore)
			if !ok || (ds.Name != name && nasExport(ds) != export) {
				continue
			}
			if ds.Name != name || nasExport(ds) != export {
				return none, &soapFault{"DuplicateName", fmt.Sprintf("The name '%s' already exists.", name),
					fmt.Sprintf(`<name>%s</name><object type="Datastore">%s</object>`, xmlText(name), ds.Self.Value)}
			}
			shared = ds
		}
	}
	if !d.exports[export] {
		return none, &soapFault{"PlatformConfigFault", fmt.Sprintf("NFS mount %s failed: Unable to connect to NFS "+
			"server.", export), fmt.Sprintf("<text>Unable to connect to NFS server %s</text>", xmlText(spec.RemoteHost))}
	}
	accessMode := string(types.HostMountModeReadWrite)
	if spec.AccessMode == string(types.HostMountModeReadOnly) {
		accessMode = spec.AccessMode
	}
	if shared == nil {
		created, fault := d.createNasDatastore(host, spec)
		if fault != nil {
			return none, fault
		}
		shared = created
	} else {
		mountDatastore(host, shared)
	}
	for i := range shared.Host {
		if shared.Host[i].Key == host.Self {
			shared.Host[i].MountInfo.AccessMode = accessMode
		}
	}
	d.lab.Logf("host %s mounted NFS export %s as datastore %s (%s)", host.Name, export, name, accessMode)
	return shared.Self, nil
}

// createNasDatastore makes the datastore of an export the datacenter does not have yet: a directory of the lab's
// data directory stands for the export, so VM files can live on it.
func (d *Datastores) createNasDatastore(host *simulator.HostSystem, spec types.HostNasVolumeSpec) (*simulator.Datastore,
	*soapFault) {
	dir := filepath.Join(d.dataDir, "nfs", spec.RemoteHost, filepath.Clean("/"+spec.RemotePath))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &soapFault{"PlatformConfigFault", err.Error(), fmt.Sprintf("<text>%s</text>", xmlText(err.Error()))}
	}
	dss, ok := simulator.Map.Get(*host.ConfigManager.DatastoreSystem).(*simulator.HostDatastoreSystem)
	if !ok {
		return nil, &soapFault{"NotSupported", "The operation is not supported on the object.", ""}
	}
	res := dss.CreateLocalDatastore(d.lab.Context(), &types.CreateLocalDatastore{This: dss.Self, Name: spec.LocalPath,
		Path: dir}).(*methods.CreateLocalDatastoreBody)
	if res.Fault_ != nil {
		return nil, &soapFault{"PlatformConfigFault", res.Fault_.String, fmt.Sprintf("<text>%s</text>",
			xmlText(res.Fault_.String))}
	}
	ds := simulator.Map.Get(res.Res.Returnval).(*simulator.Datastore)
	rekeyDatastore(ds)
	kind := spec.Type
	if kind == "" {
		kind = string(types.HostFileSystemVolumeFileSystemTypeNFS)
	}
	local := ds.Info.(*types.LocalDatastoreInfo)
	ds.Info = &types.NasDatastoreInfo{DatastoreInfo: local.DatastoreInfo, Nas: &types.HostNasVolume{
		HostFileSystemVolume: types.HostFileSystemVolume{Type: kind, Name: spec.LocalPath,
			Capacity: datastoreCapacity},
		RemoteHost: spec.RemoteHost, RemotePath: spec.RemotePath, UserName: spec.UserName,
		SecurityType: spec.SecurityType}}
	ds.Summary.Type = kind
	ds.Summary.MultipleHostAccess = types.NewBool(true)
	d.settleFreeSpace(ds)
	return ds, nil
}

// nasExport is the server:path a datastore mounts, "" for a datastore that is not NFS.
func nasExport(ds *simulator.Datastore) string {
	if info, ok := ds.Info.(*types.NasDatastoreInfo); ok && info.Nas != nil {
		return nfsExportKey(info.Nas.RemoteHost, info.Nas.RemotePath)
	}
	return ""
}

func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// HostStorageSystem is a host's HostStorageSystem with fileSystemVolumeInfo, which the simulator leaves unset:
// vCenter lists every file system the host mounts (vSphere Web Services API, HostFileSystemVolumeInfo), here the
// host's datastores, each with its mount (path, access mode) and volume (type, name, capacity; server and path for
// NFS).
type HostStorageSystem struct {
	mo.HostStorageSystem // first, as the simulator's search index needs
	sim                  *simulator.HostStorageSystem
	host                 *simulator.HostSystem
}

func NewHostStorageSystem(host *simulator.HostSystem) *HostStorageSystem {
	sim, ok := simulator.Map.Get(*host.ConfigManager.StorageSystem).(*simulator.HostStorageSystem)
	if !ok {
		return nil
	}
	return &HostStorageSystem{HostStorageSystem: sim.HostStorageSystem, sim: sim, host: host}
}

func (s *HostStorageSystem) RescanAllHba(ctx *simulator.Context, req *types.RescanAllHba) soap.HasFault {
	return s.sim.RescanAllHba(ctx, req)
}

func (s *HostStorageSystem) RescanVmfs(ctx *simulator.Context, req *types.RescanVmfs) soap.HasFault {
	return s.sim.RescanVmfs(ctx, req)
}

func (s *HostStorageSystem) RefreshStorageSystem(ctx *simulator.Context, req *types.RefreshStorageSystem) soap.HasFault {
	return s.sim.RefreshStorageSystem(ctx, req)
}

// Get is what the property collector reads: the simulator's object with the host's file systems.
func (s *HostStorageSystem) Get() mo.Reference {
	view := s.sim.HostStorageSystem
	info := &types.HostFileSystemVolumeInfo{VolumeTypeList: []string{"VMFS", "NFS", "NFS41", "CIFS", "vsan", "VFFS",
		"VVOL", "PMEM", "vsanD", "OTHER"}}
	for _, ref := range s.host.Datastore {
		ds, ok := simulator.Map.Get(ref).(*simulator.Datastore)
		if !ok {
			continue
		}
		mount := types.HostMountInfo{Path: ds.Info.GetDatastoreInfo().Url,
			AccessMode: string(types.HostMountModeReadWrite), Mounted: types.NewBool(true),
			Accessible: types.NewBool(true)}
		for _, m := range ds.Host {
			if m.Key == s.host.Self {
				mount = m.MountInfo
			}
		}
		volume := types.HostFileSystemVolume{Type: ds.Summary.Type, Name: ds.Name, Capacity: ds.Summary.Capacity}
		var base types.BaseHostFileSystemVolume = &volume
		if info, ok := ds.Info.(*types.NasDatastoreInfo); ok && info.Nas != nil {
			nas := *info.Nas
			nas.Capacity = ds.Summary.Capacity
			base = &nas
		}
		info.MountInfo = append(info.MountInfo, types.HostFileSystemMountInfo{MountInfo: mount, Volume: base})
	}
	view.FileSystemVolumeInfo = *info
	return &view
}
