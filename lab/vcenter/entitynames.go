package main

import (
	"reflect"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
)

// escapeEntityName escapes the name of an entity as it enters the inventory. Networks (port groups included) carry
// their name in a field of their own (Network.name) besides ManagedEntity.name; both are escaped.
func escapeEntityName(entity mo.Entity) {
	entity.Entity().Name = simobj.EscapeName(entity.Entity().Name)
	if value := reflect.ValueOf(entity); value.Kind() == reflect.Ptr && value.Elem().Kind() == reflect.Struct {
		if name := value.Elem().FieldByName("Name"); name.IsValid() && name.CanSet() && name.Kind() == reflect.String {
			name.SetString(simobj.EscapeName(name.String()))
		}
	}
}

// renamed escapes the new name a Rename_Task gave.
func renamed(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	if fault != nil || t.Info.Entity == nil {
		return result, fault
	}
	if entity, ok := simulator.Map.Get(*t.Info.Entity).(mo.Entity); ok {
		escapeEntityName(entity)
		simulator.Map.Update(entity, []types.PropertyChange{{Name: "name", Val: entity.Entity().Name}})
	}
	return result, fault
}
