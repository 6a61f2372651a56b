// Package simobj finds the simulator's inventory objects by reference: an entity, and the first object of a type
// above one; and the simulator context the lab works in.
package simobj

import (
	"context"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Entity is the inventory object of ref in the simulator's registry, or nil.
func Entity(ref types.ManagedObjectReference) mo.Entity {
	e, _ := simulator.Map.Get(ref).(mo.Entity)
	return e
}

// Ancestor walks up the inventory from ref to the first object of the given type.
func Ancestor(ref types.ManagedObjectReference, kind string) (types.ManagedObjectReference, bool) {
	for {
		e := Entity(ref)
		if e == nil || e.Entity().Parent == nil {
			return types.ManagedObjectReference{}, false
		}
		ref = *e.Entity().Parent
		if ref.Type == kind {
			return ref, true
		}
	}
}

// Context is the simulator context the lab works in: its own session (vpxd) over the simulator's registry.
func Context(ctx context.Context) *simulator.Context {
	return &simulator.Context{
		Context: ctx,
		Session: &simulator.Session{UserSession: types.UserSession{UserName: "vpxd"}, Registry: simulator.NewRegistry()},
		Map:     simulator.Map,
	}
}
