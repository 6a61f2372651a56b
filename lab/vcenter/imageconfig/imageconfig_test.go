package imageconfig

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// A host's image acceptance level starts at partner, takes another known level and refuses an unknown one with
// InvalidArgument naming the value; each host keeps its own.
func TestHostImageAcceptance(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c
	first, second := tl.manager(t, tl.hosts[0]), tl.manager(t, tl.hosts[1])
	if first == second || first.Type != "HostImageConfigManager" {
		t.Fatalf("managers of two hosts: %v, %v", first, second)
	}
	level := func(ref types.ManagedObjectReference) string {
		res, err := methods.HostImageConfigGetAcceptance(ctx, c.Client, &types.HostImageConfigGetAcceptance{This: ref})
		if err != nil {
			t.Fatal(err)
		}
		return res.Returnval
	}
	if got := level(first); got != "partner" {
		t.Fatalf("acceptance at start: %q, want partner", got)
	}
	_, err := methods.UpdateHostImageAcceptanceLevel(ctx, c.Client, &types.UpdateHostImageAcceptanceLevel{This: first,
		NewAcceptanceLevel: "anything"})
	if err == nil {
		t.Fatal("an unknown acceptance level was taken")
	}
	if _, ok := soap.ToSoapFault(err).VimFault().(types.InvalidArgument); !ok || !strings.Contains(err.Error(), `"anything"`) {
		t.Errorf("an unknown acceptance level: got %v (%#v), want InvalidArgument naming it", err,
			soap.ToSoapFault(err).VimFault())
	}
	if got := level(first); got != "partner" {
		t.Errorf("acceptance after a refused update: %q", got)
	}
	for _, want := range []string{"vmware_certified", "vmware_accepted", "community"} {
		if _, err := methods.UpdateHostImageAcceptanceLevel(ctx, c.Client, &types.UpdateHostImageAcceptanceLevel{
			This: first, NewAcceptanceLevel: want}); err != nil {
			t.Fatal(err)
		}
		if got := level(first); got != want {
			t.Errorf("acceptance after the update to %s: %q", want, got)
		}
	}
	if got := level(second); got != "partner" {
		t.Errorf("another host's acceptance after the first host's update: %q", got)
	}
}
