package vimfault

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestInvalidArgument(t *testing.T) {
	f := InvalidArgument("config.deviceType", "%q is not one of %s", "x", "a, b")
	want := `A specified parameter was not correct: config.deviceType ("x" is not one of a, b)`
	if f.Error() != want {
		t.Errorf("message %q, want %q", f.Error(), want)
	}
	if arg, ok := f.Fault.(*types.InvalidArgument); !ok || arg.InvalidProperty != "config.deviceType" {
		t.Errorf("fault %#v, want InvalidArgument of config.deviceType", f.Fault)
	}
	soap := f.SOAP()
	if soap.String != want {
		t.Errorf("SOAP fault string %q, want %q", soap.String, want)
	}
	if _, ok := soap.Detail.Fault.(*types.InvalidArgument); !ok {
		t.Errorf("SOAP fault detail %#v, want InvalidArgument", soap.Detail.Fault)
	}
}
