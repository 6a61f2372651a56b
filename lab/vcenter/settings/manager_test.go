package settings

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// vCenter's settings have the lab's vGPU vMotion option, off, take a bool for it and refuse a string, and take new
// keys; the simulator's own settings, which every lab of the process starts from, stay as they were.
func TestVCenterSettings(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	if v, ok := tl.vcenter.Value(VGPUHotMigrate).(bool); !ok || v {
		t.Fatalf("%s at start: %v, want false", VGPUHotMigrate, tl.vcenter.Value(VGPUHotMigrate))
	}
	m := object.NewOptionManager(tl.c.Client, tl.vcenter.Reference())
	if err := m.Update(ctx, []types.BaseOptionValue{&types.OptionValue{Key: VGPUHotMigrate, Value: "true"}}); err == nil ||
		!strings.Contains(err.Error(), "takes a boolean value") {
		t.Errorf("a string for a bool option: got %v, want InvalidArgument", err)
	}
	if err := m.Update(ctx, []types.BaseOptionValue{&types.OptionValue{Key: VGPUHotMigrate, Value: true},
		&types.OptionValue{Key: "lab.new.key", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := tl.vcenter.Value(VGPUHotMigrate).(bool); !v || tl.vcenter.Value("lab.new.key") != "x" {
		t.Errorf("after the update: %v, %v", tl.vcenter.Value(VGPUHotMigrate), tl.vcenter.Value("lab.new.key"))
	}
	for _, o := range tl.simulatorSettings.Setting {
		if o.GetOptionValue().Key == "lab.new.key" {
			t.Error("the simulator's own settings changed")
		}
	}
}
