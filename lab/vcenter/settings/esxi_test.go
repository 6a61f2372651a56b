package settings

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// A host's advanced options have ESXi's definitions: a choice is checked against its list, an unknown key is
// refused with InvalidName, and a valid change is read back.
func TestHostAdvancedOptions(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c
	host := object.NewHostSystem(c.Client, tl.hosts[0])
	om, err := host.ConfigManager().OptionManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var props mo.OptionManager
	if err := om.Properties(ctx, om.Reference(), []string{"supportedOption", "setting"}, &props); err != nil {
		t.Fatal(err)
	}
	var level *types.ChoiceOption
	for _, def := range props.SupportedOption {
		if def.Key == "Config.HostAgent.log.level" {
			level, _ = def.OptionType.(*types.ChoiceOption)
		}
	}
	if level == nil || level.ChoiceInfo[level.DefaultIndex].GetElementDescription().Key != "info" {
		t.Fatalf("Config.HostAgent.log.level: got definition %#v, want a choice defaulting to info", level)
	}
	set := func(key string, value interface{}) error {
		return om.Update(ctx, []types.BaseOptionValue{&types.OptionValue{Key: key, Value: value}})
	}
	if err := set("Config.HostAgent.log.level", "loud"); !soap.IsSoapFault(err) {
		t.Errorf("a value outside the choices: got %v, want InvalidArgument", err)
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.InvalidArgument); !ok {
		t.Errorf("a value outside the choices: got %#v, want InvalidArgument", soap.ToSoapFault(err).VimFault())
	}
	if err := set("This.Is.No.Where", "verbose"); !soap.IsSoapFault(err) {
		t.Errorf("an unknown key: got %v, want InvalidName", err)
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.InvalidName); !ok {
		t.Errorf("an unknown key: got %#v, want InvalidName", soap.ToSoapFault(err).VimFault())
	}
	if err := set("Config.HostAgent.log.level", "verbose"); err != nil {
		t.Fatal(err)
	}
	values, err := om.Query(ctx, "Config.HostAgent.log.level")
	if err != nil || len(values) != 1 || values[0].GetOptionValue().Value != "verbose" {
		t.Errorf("read back: got %v, %v; want verbose", values, err)
	}
	other, err := object.NewHostSystem(c.Client, tl.hosts[1]).ConfigManager().OptionManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if values, err := other.Query(ctx, "Config.HostAgent.log.level"); err != nil || values[0].GetOptionValue().Value != "info" {
		t.Errorf("another host's option changed with the first: got %v, %v", values, err)
	}
}
