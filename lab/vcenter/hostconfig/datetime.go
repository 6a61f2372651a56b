package hostconfig

import (
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/vimfault"
)

// DateTimeSystem is a host's HostDateTimeSystem (configManager.dateTimeSystem): UTC, no NTP servers at start, as a
// freshly installed ESXi host; UpdateDateTimeConfig sets the NTP servers (and the time zone key, which ESXi keeps
// at UTC), QueryDateTime answers the host's clock (vSphere Web Services API, HostDateTimeSystem).
type DateTimeSystem struct {
	mo.HostDateTimeSystem
}

func NewDateTimeSystem(host *simulator.HostSystem) *DateTimeSystem {
	s := &DateTimeSystem{}
	s.Self = types.ManagedObjectReference{Type: "HostDateTimeSystem", Value: "dateTimeSystem-" + simobj.Number(host.Self)}
	s.DateTimeInfo = types.HostDateTimeInfo{
		TimeZone:  types.HostDateTimeSystemTimeZone{Key: "UTC", Name: "UTC", Description: "UTC", GmtOffset: 0},
		NtpConfig: &types.HostNtpConfig{Server: []string{}},
	}
	return s
}

func (s *DateTimeSystem) UpdateDateTimeConfig(req *types.UpdateDateTimeConfig) soap.HasFault {
	body := &methods.UpdateDateTimeConfigBody{}
	if tz := req.Config.TimeZone; tz != "" && tz != "UTC" {
		body.Fault_ = vimfault.InvalidArgument("config.timeZone", "%q: ESXi keeps its clock in UTC", tz).SOAP()
		return body
	}
	if ntp := req.Config.NtpConfig; ntp != nil {
		info := s.DateTimeInfo
		info.NtpConfig = &types.HostNtpConfig{Server: append([]string{}, ntp.Server...), ConfigFile: ntp.ConfigFile}
		simulator.Map.Update(s, []types.PropertyChange{{Name: "dateTimeInfo", Val: info}})
	}
	body.Res = &types.UpdateDateTimeConfigResponse{}
	return body
}

func (s *DateTimeSystem) QueryDateTime(*types.QueryDateTime) soap.HasFault {
	return &methods.QueryDateTimeBody{Res: &types.QueryDateTimeResponse{Returnval: time.Now().UTC()}}
}
