package hostconfig

import (
	"reflect"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
)

// AddPlaceholders gives a host an object for every configManager reference the simulator leaves pointing at nothing
// (it hands all hosts the same ids, such as ha-vmotion-system, without registering objects for them), under an id
// of the host's own. Those answer their properties unset, as a host that reports nothing for them; their methods
// are not implemented (MethodNotFound).
func AddPlaceholders(host *simulator.HostSystem) {
	managers := reflect.ValueOf(&host.ConfigManager).Elem()
	for i := 0; i < managers.NumField(); i++ {
		ref, ok := managers.Field(i).Interface().(*types.ManagedObjectReference)
		if !ok || ref == nil || simulator.Map.Get(*ref) != nil {
			continue
		}
		own := types.ManagedObjectReference{Type: ref.Type,
			Value: strings.TrimPrefix(ref.Value, "ha-") + "-" + simobj.Number(host.Self)}
		placeholder, err := mo.ObjectContentToType(types.ObjectContent{Obj: own}, true)
		if err != nil {
			continue
		}
		simulator.Map.Put(placeholder.(mo.Reference))
		managers.Field(i).Set(reflect.ValueOf(&own))
	}
}
