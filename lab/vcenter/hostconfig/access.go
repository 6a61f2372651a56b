package hostconfig

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/vimfault"
)

// AccessManager is a host's HostAccessManager (configManager.hostAccessManager, vSphere 6.0 and later): the
// lockdown mode, disabled when a host is added, shown also in the host's config.lockdownMode; ChangeLockdownMode
// takes one of HostLockdownMode's values and refuses another with InvalidArgument; the lockdown exception users and
// the system users are lists a client reads and replaces (vSphere Web Services API, HostAccessManager).
type AccessManager struct {
	mo.HostAccessManager
	host        *simulator.HostSystem
	exceptions  []string
	systemUsers []string
}

func NewAccessManager(host *simulator.HostSystem) *AccessManager {
	m := &AccessManager{host: host}
	m.Self = types.ManagedObjectReference{Type: "HostAccessManager", Value: "hostAccessManager-" + simobj.Number(host.Self)}
	m.LockdownMode = types.HostLockdownModeLockdownDisabled
	host.Config.LockdownMode = m.LockdownMode
	return m
}

func (m *AccessManager) ChangeLockdownMode(req *types.ChangeLockdownMode) soap.HasFault {
	body := &methods.ChangeLockdownModeBody{}
	switch req.Mode {
	case types.HostLockdownModeLockdownDisabled, types.HostLockdownModeLockdownNormal,
		types.HostLockdownModeLockdownStrict:
	default:
		body.Fault_ = vimfault.InvalidArgument("mode", "%q is not one of lockdownDisabled, lockdownNormal, lockdownStrict",
			req.Mode).SOAP()
		return body
	}
	m.LockdownMode = req.Mode
	m.host.Config.LockdownMode = req.Mode
	body.Res = &types.ChangeLockdownModeResponse{}
	return body
}

func (m *AccessManager) QueryLockdownExceptions(*types.QueryLockdownExceptions) soap.HasFault {
	return &methods.QueryLockdownExceptionsBody{
		Res: &types.QueryLockdownExceptionsResponse{Returnval: append([]string(nil), m.exceptions...)}}
}

func (m *AccessManager) UpdateLockdownExceptions(req *types.UpdateLockdownExceptions) soap.HasFault {
	m.exceptions = append([]string(nil), req.Users...)
	return &methods.UpdateLockdownExceptionsBody{Res: &types.UpdateLockdownExceptionsResponse{}}
}

func (m *AccessManager) QuerySystemUsers(*types.QuerySystemUsers) soap.HasFault {
	return &methods.QuerySystemUsersBody{
		Res: &types.QuerySystemUsersResponse{Returnval: append([]string(nil), m.systemUsers...)}}
}

func (m *AccessManager) UpdateSystemUsers(req *types.UpdateSystemUsers) soap.HasFault {
	m.systemUsers = append([]string(nil), req.Users...)
	return &methods.UpdateSystemUsersBody{Res: &types.UpdateSystemUsersResponse{}}
}
