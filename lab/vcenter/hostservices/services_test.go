package hostservices

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// testLab is govmomi's own simulator (labtest.Simulator: a cluster of two hosts and a standalone host) with each
// host's service system as the lab attaches it, and the Xorg starts the lab is told of.
type testLab struct {
	*labtest.HostLab
	systems []*System
	xorg    []types.ManagedObjectReference
}

func (tl *testLab) Update(obj mo.Reference, changes ...types.PropertyChange) {
	simulator.Map.Update(obj, changes)
}

func (tl *testLab) XorgStarted(host types.ManagedObjectReference) { tl.xorg = append(tl.xorg, host) }

func startLab(t *testing.T) *testLab {
	t.Helper()
	tl := &testLab{}
	tl.HostLab = labtest.StartHosts(t, func(host *simulator.HostSystem) {
		s := New(tl, host.Self, host.Name)
		simulator.Map.Put(s)
		ref := s.Self
		host.ConfigManager.ServiceSystem = &ref
		host.Config.Service = &types.HostServiceInfo{Service: s.List()}
		tl.systems = append(tl.systems, s)
	})
	return tl
}

// services reads a host's services from its service system and from its config.service, which must agree.
func (tl *testLab) services(t *testing.T, i int) map[string]types.HostService {
	t.Helper()
	ctx := context.Background()
	var host mo.HostSystem
	if err := tl.Client.RetrieveOne(ctx, tl.Hosts[i], []string{"configManager.serviceSystem", "config.service"}, &host); err != nil {
		t.Fatal(err)
	}
	var ss mo.HostServiceSystem
	if err := tl.Client.RetrieveOne(ctx, *host.ConfigManager.ServiceSystem, []string{"serviceInfo"}, &ss); err != nil {
		t.Fatal(err)
	}
	out := map[string]types.HostService{}
	for j, s := range ss.ServiceInfo.Service {
		c := host.Config.Service.Service[j]
		if c.Key != s.Key || c.Running != s.Running || c.Policy != s.Policy {
			t.Errorf("host %d: config.service %+v, serviceInfo %+v", i, c, s)
		}
		out[s.Key] = s
	}
	return out
}

// A host's service system lists ESXi's services: SSH and the ESXi Shell stopped, Xorg and vpxa running.
func TestDefaultServices(t *testing.T) {
	tl := startLab(t)
	got := tl.services(t, 0)
	if len(got) != 9 {
		t.Errorf("%d services, want ESXi's 9: %+v", len(got), got)
	}
	ssh, xorg, vpxa := got["TSM-SSH"], got[Xorg], got["vpxa"]
	if ssh.Running || ssh.Policy != "off" || len(ssh.Ruleset) != 1 || ssh.Ruleset[0] != "sshServer" {
		t.Errorf("SSH: %+v, want stopped, policy off, ruleset sshServer", ssh)
	}
	if !xorg.Running || xorg.Policy != "on" || xorg.Label != "X.Org Server" || !vpxa.Running {
		t.Errorf("Xorg %+v and vpxa %+v, want both running", xorg, vpxa)
	}
}

// Starting and stopping a service changes it on that host alone; only Xorg's start concerns the lab.
func TestStartAndStopService(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	ref := tl.systems[0].Self
	if _, err := methods.StartService(ctx, tl.Client, &types.StartService{This: ref, Id: "TSM-SSH"}); err != nil {
		t.Fatal(err)
	}
	if !tl.services(t, 0)["TSM-SSH"].Running {
		t.Error("SSH not running after StartService")
	}
	if tl.services(t, 1)["TSM-SSH"].Running {
		t.Error("SSH started on another host")
	}
	if _, err := methods.StopService(ctx, tl.Client, &types.StopService{This: ref, Id: "TSM-SSH"}); err != nil {
		t.Fatal(err)
	}
	if _, err := methods.RefreshServices(ctx, tl.Client, &types.RefreshServices{This: ref}); err != nil {
		t.Fatal(err)
	}
	if tl.services(t, 0)["TSM-SSH"].Running {
		t.Error("SSH running after StopService")
	}
	if len(tl.xorg) != 0 {
		t.Errorf("Xorg starts reported for SSH: %v", tl.xorg)
	}
}

// Restarting Xorg, or starting it once stopped, tells the lab (which applies the graphics configuration); starting
// it while it runs does not.
func TestXorgStartsReachTheLab(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	ref, host := tl.systems[1].Self, tl.Hosts[1]
	if _, err := methods.StartService(ctx, tl.Client, &types.StartService{This: ref, Id: Xorg}); err != nil {
		t.Fatal(err)
	}
	if len(tl.xorg) != 0 {
		t.Fatalf("starting a running Xorg reported %v", tl.xorg)
	}
	if _, err := methods.RestartService(ctx, tl.Client, &types.RestartService{This: ref, Id: Xorg}); err != nil {
		t.Fatal(err)
	}
	if len(tl.xorg) != 1 || tl.xorg[0] != host {
		t.Fatalf("after RestartService: Xorg starts %v, want [%v]", tl.xorg, host)
	}
	if _, err := methods.StopService(ctx, tl.Client, &types.StopService{This: ref, Id: Xorg}); err != nil {
		t.Fatal(err)
	}
	if tl.services(t, 1)[Xorg].Running || len(tl.xorg) != 1 {
		t.Fatalf("after StopService: running %v, Xorg starts %v", tl.services(t, 1)[Xorg].Running, tl.xorg)
	}
	if _, err := methods.StartService(ctx, tl.Client, &types.StartService{This: ref, Id: Xorg}); err != nil {
		t.Fatal(err)
	}
	if !tl.services(t, 1)[Xorg].Running || len(tl.xorg) != 2 {
		t.Errorf("after StartService of a stopped Xorg: running %v, Xorg starts %v", tl.services(t, 1)[Xorg].Running, tl.xorg)
	}
}

// An unknown service is NotFound naming it, the host and the host's services; a policy must be on, off or automatic.
func TestServiceFaultsAndPolicy(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	ref := tl.systems[0].Self
	name := simulator.Map.Get(tl.Hosts[0]).(*simulator.HostSystem).Name
	_, err := methods.RestartService(ctx, tl.Client, &types.RestartService{This: ref, Id: "sshd"})
	if !labtest.IsFault(err, "NotFound") || !strings.Contains(err.Error(), `service "sshd" on host `+name+" (services: DCUI, TSM,") {
		t.Errorf("unknown service: %v, want NotFound naming it, host %s and the services", err, name)
	}
	_, err = methods.UpdateServicePolicy(ctx, tl.Client, &types.UpdateServicePolicy{This: ref, Id: "sshd", Policy: "on"})
	if !labtest.IsFault(err, "NotFound") {
		t.Errorf("policy of an unknown service: %v, want NotFound", err)
	}
	_, err = methods.UpdateServicePolicy(ctx, tl.Client, &types.UpdateServicePolicy{This: ref, Id: "TSM-SSH", Policy: "always"})
	if !labtest.IsFault(err, "InvalidArgument") || !strings.Contains(err.Error(), `"always" is not one of on, off, automatic`) {
		t.Errorf("policy always: %v, want InvalidArgument", err)
	}
	if got := tl.services(t, 0)["TSM-SSH"].Policy; got != "off" {
		t.Errorf("a refused policy changed SSH's to %q", got)
	}
	if _, err := methods.UpdateServicePolicy(ctx, tl.Client, &types.UpdateServicePolicy{This: ref, Id: "TSM-SSH", Policy: "automatic"}); err != nil {
		t.Fatal(err)
	}
	if got := tl.services(t, 0)["TSM-SSH"]; got.Policy != "automatic" || got.Running {
		t.Errorf("SSH after policy automatic: %+v, want policy automatic, still stopped", got)
	}
	if len(tl.xorg) != 0 {
		t.Errorf("Xorg starts reported: %v", tl.xorg)
	}
}
