// Package vcmanagers holds vCenter's own service managers that the lab keeps beside the simulator's and that need
// nothing of the lab: the AuthorizationManager with vCenter Server's roles (authorization.go), the
// ScheduledTaskManager and its scheduled tasks (scheduledtasks.go), and CustomFieldsManager.SetField as vCenter
// answers it, with the custom values an entity holds by field name (customfields.go).
package vcmanagers

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// AuthorizationManager is vCenter's AuthorizationManager: the simulator's system roles (Admin, ReadOnly, View,
// Anonymous, NoAccess, NoCryptoAdmin) and the roles a vCenter Server adds beside them, which clients name (the
// vSphere Client's labels are what community.vmware's vmware_object_role_permission maps to these names).
// AddAuthorizationRole returns the new role's id, as the API defines (int), and never reuses an id.
type AuthorizationManager struct {
	simulator.AuthorizationManager
}

// vcenterRoles: names and labels as vCenter Server lists them. Ids 4 to 7 are those of VMware's table "Description
// of Roles on vSphere Servers" (vSphere Web Services Programming Guide, 8.0); the later ids and the privilege lists
// (a subset by each role's documented purpose) are not confirmed.
var vcenterRoles = []struct {
	id               int32
	name, label, doc string
	privileges       []string
}{
	{4, "VirtualMachinePowerUser", "Virtual machine power user (sample)",
		"Provides virtual machine interaction and configuration permissions",
		[]string{"Datastore.Browse", "Global.CancelTask", "ScheduledTask.Create", "ScheduledTask.Delete",
			"ScheduledTask.Edit", "ScheduledTask.Run", "VirtualMachine.Config.AddRemoveDevice",
			"VirtualMachine.Config.CPUCount", "VirtualMachine.Config.Memory", "VirtualMachine.Config.Settings",
			"VirtualMachine.Interact.ConsoleInteract", "VirtualMachine.Interact.PowerOff",
			"VirtualMachine.Interact.PowerOn", "VirtualMachine.Interact.Reset", "VirtualMachine.State.CreateSnapshot",
			"VirtualMachine.State.RevertToSnapshot"}},
	{5, "VirtualMachineUser", "Virtual machine user (sample)", "Provides virtual machine interaction permissions",
		[]string{"Global.CancelTask", "ScheduledTask.Create", "ScheduledTask.Delete", "ScheduledTask.Edit",
			"ScheduledTask.Run", "VirtualMachine.Interact.ConsoleInteract", "VirtualMachine.Interact.DeviceConnection",
			"VirtualMachine.Interact.PowerOff", "VirtualMachine.Interact.PowerOn", "VirtualMachine.Interact.Reset",
			"VirtualMachine.Interact.SetCDMedia", "VirtualMachine.Interact.Suspend"}},
	{6, "ResourcePoolAdministrator", "Resource pool administrator (sample)",
		"Supports delegated resource management", []string{"Authorization.ModifyPermissions", "Folder.Create",
			"Resource.AssignVMToPool", "Resource.CreatePool", "Resource.DeletePool", "Resource.EditPool",
			"Resource.MovePool", "Resource.RenamePool", "ScheduledTask.Create", "ScheduledTask.Run"}},
	{7, "VMwareConsolidatedBackupUser", "VMware Consolidated Backup user (sample)",
		"Privileges required for performing VMware Consolidated Backup operations",
		[]string{"VirtualMachine.Provisioning.DiskRandomRead", "VirtualMachine.Provisioning.GetVmFiles",
			"VirtualMachine.State.CreateSnapshot", "VirtualMachine.State.RemoveSnapshot"}},
	{8, "DatastoreConsumer", "Datastore consumer (sample)",
		"Allows creating virtual machines and snapshots on a datastore", []string{"Datastore.AllocateSpace"}},
	{9, "NetworkConsumer", "Network administrator (sample)",
		"Allows assigning virtual machines or hosts to networks", []string{"Network.Assign"}},
	{10, "com.vmware.Content.Admin", "Content library administrator (sample)",
		"Provides full access to content libraries", []string{"ContentLibrary.AddLibraryItem",
			"ContentLibrary.CreateLocalLibrary", "ContentLibrary.DeleteLibraryItem", "ContentLibrary.DeleteLocalLibrary",
			"ContentLibrary.UpdateLibrary", "ContentLibrary.UpdateLibraryItem", "Datastore.AllocateSpace"}},
	{11, "VirtualMachineConsoleUser", "Virtual Machine console user",
		"Allows interacting with a virtual machine's console", []string{"VirtualMachine.Interact.ConsoleInteract"}},
	{12, "InventoryService.Tagging.TaggingAdmin", "Tagging Admin", "Allows managing vSphere tags",
		[]string{"InventoryService.Tagging.AttachTag", "InventoryService.Tagging.CreateCategory",
			"InventoryService.Tagging.CreateTag", "InventoryService.Tagging.DeleteCategory",
			"InventoryService.Tagging.DeleteTag", "InventoryService.Tagging.EditCategory",
			"InventoryService.Tagging.EditTag", "InventoryService.Tagging.ModifyUsedByForCategory",
			"InventoryService.Tagging.ModifyUsedByForTag"}},
}

// NewAuthorizationManager is the simulator's AuthorizationManager sim, its roles, permissions and privileges, with
// vCenter's roles added; it takes sim's place in the registry when put there.
func NewAuthorizationManager(sim *simulator.AuthorizationManager) *AuthorizationManager {
	m := &AuthorizationManager{AuthorizationManager: *sim}
	m.RoleList = append([]types.AuthorizationRole(nil), sim.RoleList...)
	for _, role := range vcenterRoles {
		privileges := append([]string{"System.Anonymous", "System.Read", "System.View"}, role.privileges...)
		m.RoleList = append(m.RoleList, types.AuthorizationRole{RoleId: role.id, Name: role.name,
			Info: &types.Description{Label: role.label, Summary: role.doc}, Privilege: privileges})
	}
	return m
}

// AddAuthorizationRole adds a role as the simulator does and gives it the id after the highest one in use.
func (m *AuthorizationManager) AddAuthorizationRole(req *types.AddAuthorizationRole) soap.HasFault {
	next := int32(0)
	for _, role := range m.RoleList {
		if role.RoleId >= next {
			next = role.RoleId + 1
		}
	}
	body, ok := m.AuthorizationManager.AddAuthorizationRole(req).(*methods.AddAuthorizationRoleBody)
	if !ok || body.Fault_ != nil {
		return body
	}
	m.RoleList[len(m.RoleList)-1].RoleId = next
	body.Res = &types.AddAuthorizationRoleResponse{Returnval: next}
	return body
}
