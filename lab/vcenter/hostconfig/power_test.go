package hostconfig

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// Each host's power system offers ESXi's four policies, starts on Balanced (dynamic), takes another by key and
// refuses an unknown key; the host's config.powerSystemInfo follows, and other hosts keep theirs.
func TestHostPowerPolicy(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	hosts := func() []mo.HostSystem {
		var out []mo.HostSystem
		for _, h := range tl.Hosts {
			var host mo.HostSystem
			if err := c.RetrieveOne(ctx, h, []string{"configManager.powerSystem", "config.powerSystemInfo"},
				&host); err != nil {
				t.Fatal(err)
			}
			out = append(out, host)
		}
		return out
	}
	first := hosts()[0]
	ref := *first.ConfigManager.PowerSystem
	var ps mo.HostPowerSystem
	if err := c.RetrieveOne(ctx, ref, nil, &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps.Capability.AvailablePolicy) != 4 || ps.Info.CurrentPolicy.ShortName != "dynamic" {
		t.Fatalf("power system: %d policies, current %q; want 4 and dynamic", len(ps.Capability.AvailablePolicy),
			ps.Info.CurrentPolicy.ShortName)
	}
	if _, err := methods.ConfigurePowerPolicy(ctx, c.Client, &types.ConfigurePowerPolicy{This: ref, Key: 9}); err == nil {
		t.Error("an unknown policy key was taken")
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.InvalidArgument); !ok {
		t.Errorf("an unknown policy key: got %v, want InvalidArgument", err)
	}
	if _, err := methods.ConfigurePowerPolicy(ctx, c.Client, &types.ConfigurePowerPolicy{This: ref, Key: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.RetrieveOne(ctx, ref, []string{"info"}, &ps); err != nil || ps.Info.CurrentPolicy.ShortName != "static" {
		t.Errorf("after choosing key 1: %q, %v; want static", ps.Info.CurrentPolicy.ShortName, err)
	}
	all := hosts()
	if all[0].Config.PowerSystemInfo.CurrentPolicy.ShortName != "static" {
		t.Errorf("host config.powerSystemInfo: %+v, want static", all[0].Config.PowerSystemInfo)
	}
	if all[1].Config.PowerSystemInfo.CurrentPolicy.ShortName != "dynamic" {
		t.Errorf("another host's policy changed: %+v", all[1].Config.PowerSystemInfo)
	}
}
