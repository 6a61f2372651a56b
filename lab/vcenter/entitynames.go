package main

import (
	"reflect"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// escapeName writes an entity name as vCenter stores it (vSphere Web Services API, ManagedEntity.name,
// developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.ManagedEntity.html): a slash becomes %2f, a
// backslash %5c and a percent sign %25, unless the percent sign already starts one of these escapes, so a name
// escaped once stays as it is.
func escapeName(name string) string {
	if !strings.ContainsAny(name, `/\%`) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '/':
			b.WriteString("%2f")
		case '\\':
			b.WriteString("%5c")
		case '%':
			if next := strings.ToLower(name[i+1:]); strings.HasPrefix(next, "2f") || strings.HasPrefix(next, "5c") ||
				strings.HasPrefix(next, "25") {
				b.WriteByte(c)
			} else {
				b.WriteString("%25")
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeEntityName escapes the name of an entity as it enters the inventory. Networks (port groups included) carry
// their name in a field of their own (Network.name) besides ManagedEntity.name; both are escaped.
func escapeEntityName(entity mo.Entity) {
	entity.Entity().Name = escapeName(entity.Entity().Name)
	if value := reflect.ValueOf(entity); value.Kind() == reflect.Ptr && value.Elem().Kind() == reflect.Struct {
		if name := value.Elem().FieldByName("Name"); name.IsValid() && name.CanSet() && name.Kind() == reflect.String {
			name.SetString(escapeName(name.String()))
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
