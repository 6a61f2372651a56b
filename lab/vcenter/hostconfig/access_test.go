package hostconfig

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A host's lockdown mode starts disabled, follows ChangeLockdownMode in both places a client reads it, and an
// unknown mode is refused.
func TestHostLockdownMode(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	read := func() (mo.HostSystem, mo.HostAccessManager) {
		var host mo.HostSystem
		if err := c.RetrieveOne(ctx, tl.Hosts[0], []string{"configManager.hostAccessManager", "config.lockdownMode"},
			&host); err != nil {
			t.Fatal(err)
		}
		var access mo.HostAccessManager
		if err := c.RetrieveOne(ctx, *host.ConfigManager.HostAccessManager, []string{"lockdownMode"}, &access); err != nil {
			t.Fatal(err)
		}
		return host, access
	}
	host, access := read()
	if access.LockdownMode != "lockdownDisabled" || host.Config.LockdownMode != "lockdownDisabled" {
		t.Fatalf("at start: %s / %s", access.LockdownMode, host.Config.LockdownMode)
	}
	ref := *host.ConfigManager.HostAccessManager
	if _, err := methods.ChangeLockdownMode(ctx, c.Client, &types.ChangeLockdownMode{This: ref, Mode: "lockdownSome"}); err == nil {
		t.Error("an unknown lockdown mode was taken")
	}
	if _, err := methods.ChangeLockdownMode(ctx, c.Client, &types.ChangeLockdownMode{This: ref,
		Mode: types.HostLockdownModeLockdownNormal}); err != nil {
		t.Fatal(err)
	}
	if host, access = read(); access.LockdownMode != "lockdownNormal" || host.Config.LockdownMode != "lockdownNormal" {
		t.Errorf("after the change: %s / %s", access.LockdownMode, host.Config.LockdownMode)
	}
	if _, err := methods.UpdateLockdownExceptions(ctx, c.Client, &types.UpdateLockdownExceptions{This: ref,
		Users: []string{"svc-backup"}}); err != nil {
		t.Fatal(err)
	}
	res, err := methods.QueryLockdownExceptions(ctx, c.Client, &types.QueryLockdownExceptions{This: ref})
	if err != nil || len(res.Returnval) != 1 || res.Returnval[0] != "svc-backup" {
		t.Errorf("lockdown exceptions: %+v, %v", res, err)
	}
}
