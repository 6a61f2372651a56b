package vcmanagers

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// ServeSetField answers CustomFieldsManager.SetField as vCenter does: it assigns the value of a custom field on an
// entity, replacing the value the entity already had for that field (vSphere Web Services API,
// CustomFieldsManager.SetField: "Assigns a value to a custom field on an entity"). The simulator appends a second
// value for the same key instead, so a reader would see the old value first. AddCustomFieldDef stays the
// simulator's: it refuses a name that exists with DuplicateName ("Thrown if a custom field with the name already
// exists"), which is what makes taking gpuops.vgpu's cluster lock atomic; requests are served one at a time under
// the lab's lock. ServeSetField runs where a simulator method would, outside any object's lock: it takes the
// entity's lock in the simulator's registry for the change. It answers false for any other request.
func ServeSetField(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	if call.Method != "SetField" || call.This.Type != "CustomFieldsManager" {
		return false
	}
	method, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return false
	}
	req, ok := method.Body.(*types.SetField)
	if !ok {
		return false
	}
	if !fieldDefined(req.Key) {
		soaphttp.WriteFault(w, "A specified parameter was not correct: key", "InvalidArgument",
			"<invalidProperty>key</invalidProperty>")
		return true
	}
	obj, _ := simulator.Map.Get(req.Entity).(mo.Entity)
	if obj == nil {
		soaphttp.WriteFault(w, fmt.Sprintf("The object '%s' has already been deleted or has not been completely created",
			req.Entity.Value), "ManagedObjectNotFound",
			fmt.Sprintf(`<obj type="%s">%s</obj>`, req.Entity.Type, req.Entity.Value))
		return true
	}
	simulator.Map.WithLock(req.Entity, func() {
		entity := obj.Entity()
		entity.CustomValue = withField(entity.CustomValue, req.Key, req.Value)
		entity.Value = withField(entity.Value, req.Key, req.Value)
		simulator.Map.Update(obj, []types.PropertyChange{
			{Name: "customValue", Val: entity.CustomValue}, {Name: "value", Val: entity.Value}})
	})
	soaphttp.WriteResponse(w, `<SetFieldResponse xmlns="urn:vim25"></SetFieldResponse>`)
	return true
}

func fieldDefined(key int32) bool {
	for _, def := range simulator.Map.CustomFieldsManager().Field {
		if def.Key == key {
			return true
		}
	}
	return false
}

// withField is values with the field key set to value, in place when the key has a value already.
func withField(values []types.BaseCustomFieldValue, key int32, value string) []types.BaseCustomFieldValue {
	out := make([]types.BaseCustomFieldValue, 0, len(values)+1)
	set := false
	for _, v := range values {
		if v.GetCustomFieldValue().Key == key {
			if !set {
				out = append(out, newFieldValue(key, value))
				set = true
			}
			continue
		}
		out = append(out, v)
	}
	if !set {
		out = append(out, newFieldValue(key, value))
	}
	return out
}

func newFieldValue(key int32, value string) *types.CustomFieldStringValue {
	return &types.CustomFieldStringValue{CustomFieldValue: types.CustomFieldValue{Key: key}, Value: value}
}

// CustomValues is an entity's custom attributes by field name, for /lab/state.
func CustomValues(entity *mo.ManagedEntity) map[string]string {
	names := map[int32]string{}
	for _, def := range simulator.Map.CustomFieldsManager().Field {
		names[def.Key] = def.Name
	}
	out := map[string]string{}
	for _, v := range entity.CustomValue {
		if s, ok := v.(*types.CustomFieldStringValue); ok {
			if name, known := names[s.Key]; known {
				out[name] = s.Value
			}
		}
	}
	return out
}
