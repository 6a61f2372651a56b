package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// A host's image acceptance level starts at partner, takes another known level and refuses an unknown one.
func TestHostImageAcceptance(t *testing.T) {
	_, c, ref := startLabHostManager(t, "configManager.imageConfigManager")
	ctx := context.Background()
	level := func() string {
		res, err := methods.HostImageConfigGetAcceptance(ctx, c.Client, &types.HostImageConfigGetAcceptance{This: ref})
		if err != nil {
			t.Fatal(err)
		}
		return res.Returnval
	}
	if got := level(); got != "partner" {
		t.Fatalf("acceptance at start: %q, want partner", got)
	}
	if _, err := methods.UpdateHostImageAcceptanceLevel(ctx, c.Client, &types.UpdateHostImageAcceptanceLevel{This: ref,
		NewAcceptanceLevel: "anything"}); err == nil {
		t.Error("an unknown acceptance level was taken")
	}
	if _, err := methods.UpdateHostImageAcceptanceLevel(ctx, c.Client, &types.UpdateHostImageAcceptanceLevel{This: ref,
		NewAcceptanceLevel: "community"}); err != nil {
		t.Fatal(err)
	}
	if got := level(); got != "community" {
		t.Errorf("acceptance after the update: %q", got)
	}
}
