package vgputypes

import (
	"reflect"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

// The simulator decodes a request by its WSDL name, so the request types must be known to govmomi's type registry.
func TestRequestTypesAreRegistered(t *testing.T) {
	for _, v := range []interface{}{UpdateGraphicsConfig{}, RetrieveVgpuProfileInfo{}, RetrieveVgpuDeviceInfo{},
		HostGraphicsConfigDeviceType{}} {
		want := reflect.TypeOf(v)
		if got, ok := types.TypeFunc()(want.Name()); !ok || got != want {
			t.Errorf("%s resolves to %v", want.Name(), got)
		}
	}
}
