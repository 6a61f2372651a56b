package hostconfig

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A host's date and time system starts in UTC without NTP servers and keeps the servers it is given.
func TestHostDateTimeSystem(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.Client
	dts, err := object.NewHostSystem(c.Client, tl.Hosts[0]).ConfigManager().DateTimeSystem(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var s mo.HostDateTimeSystem
	if err := dts.Properties(ctx, dts.Reference(), []string{"dateTimeInfo"}, &s); err != nil {
		t.Fatal(err)
	}
	if s.DateTimeInfo.TimeZone.Key != "UTC" || s.DateTimeInfo.NtpConfig == nil || len(s.DateTimeInfo.NtpConfig.Server) != 0 {
		t.Fatalf("at start: %+v", s.DateTimeInfo)
	}
	if _, err := methods.UpdateDateTimeConfig(ctx, c.Client, &types.UpdateDateTimeConfig{This: dts.Reference(),
		Config: types.HostDateTimeConfig{NtpConfig: &types.HostNtpConfig{
			Server: []string{"0.pool.ntp.org", "1.pool.ntp.org"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := dts.Properties(ctx, dts.Reference(), []string{"dateTimeInfo"}, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.DateTimeInfo.NtpConfig.Server; len(got) != 2 || got[1] != "1.pool.ntp.org" {
		t.Errorf("NTP servers after the update: %v", got)
	}
	if _, err := dts.Query(ctx); err != nil {
		t.Errorf("QueryDateTime: %v", err)
	}
}
