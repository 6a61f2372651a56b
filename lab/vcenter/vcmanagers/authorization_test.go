package vcmanagers

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// vCenter lists its sample and service roles beside the system ones, and a role added through the API gets an id
// of its own, returned to the caller, that a later add does not reuse.
func TestVCenterRoles(t *testing.T) {
	c := startLab(t).c
	ctx := context.Background()
	ref := *c.ServiceContent.AuthorizationManager
	roles := func() map[string]types.AuthorizationRole {
		var m mo.AuthorizationManager
		if err := c.RetrieveOne(ctx, ref, []string{"roleList"}, &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]types.AuthorizationRole{}
		for _, role := range m.RoleList {
			out[role.Name] = role
		}
		return out
	}
	listed := roles()
	for name, id := range map[string]int32{"Admin": -1, "ReadOnly": -2, "NoAccess": -5, "VirtualMachinePowerUser": 4,
		"VMwareConsolidatedBackupUser": 7, "NetworkConsumer": 9, "VirtualMachineConsoleUser": 11,
		"InventoryService.Tagging.TaggingAdmin": 12} {
		if role, ok := listed[name]; !ok || role.RoleId != id {
			t.Errorf("role %s: listed %v with id %d, want id %d", name, ok, role.RoleId, id)
		}
	}
	if label := listed["NetworkConsumer"].Info.GetDescription().Label; label != "Network administrator (sample)" {
		t.Errorf("NetworkConsumer's label: %q", label)
	}

	ids := map[int32]string{}
	for _, role := range listed {
		ids[role.RoleId] = role.Name
	}
	for _, name := range []string{"lab-role-1", "lab-role-2"} {
		res, err := methods.AddAuthorizationRole(ctx, c.Client, &types.AddAuthorizationRole{This: ref, Name: name,
			PrivIds: []string{"VirtualMachine.Interact.PowerOn"}})
		if err != nil {
			t.Fatal(err)
		}
		if other, taken := ids[res.Returnval]; taken {
			t.Errorf("%s got id %d, already %s's", name, res.Returnval, other)
		}
		ids[res.Returnval] = name
		if roles()[name].RoleId != res.Returnval {
			t.Errorf("%s: the id returned (%d) is not the one listed", name, res.Returnval)
		}
	}
	if _, err := methods.RemoveAuthorizationRole(ctx, c.Client, &types.RemoveAuthorizationRole{This: ref,
		RoleId: roles()["lab-role-1"].RoleId}); err != nil {
		t.Fatal(err)
	}
	if _, left := roles()["lab-role-1"]; left {
		t.Error("the removed role is still listed")
	}
}
