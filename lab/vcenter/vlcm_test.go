package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/stats"
	"vcsim/vapi"
)

// vLCM's REST API is package vlcm's (tested there on govmomi's simulator); these tests run it on the whole lab:
// the lab's router, its maintenance rules for vGPU VMs and its record of vGPU events.

const (
	driver  = "NVD-VGPU-800"
	version = "525.105.14-1OEM.800.1.0.20613240"
)

func (tl *testLab) login(t *testing.T) *labtest.API {
	t.Helper()
	return labtest.Login(t, tl.server)
}

// imageWithDriver commits the driver to the image of the test cluster; it answers the path of its software.
func imageWithDriver(t *testing.T, tl *testLab, a *labtest.API) string {
	t.Helper()
	return a.CommitImage(tl.clusters[0].Value, driver+"="+version)
}

func TestRESTSessionAndRoutes(t *testing.T) {
	tl := startLab(t)
	var e vapi.Err
	if code := tl.call(t, http.MethodGet, "/api/esx/settings/depots/offline", nil, &e); code != http.StatusUnauthorized ||
		e.ErrorType != "UNAUTHENTICATED" {
		t.Errorf("without a session: %d %+v", code, e)
	}
	req, _ := http.NewRequest(http.MethodPost, tl.server.URL+"/api/session", nil)
	req.SetBasicAuth("lab", "wrong")
	if res, err := tl.server.Client().Do(req); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %v %v", res, err)
	}
	a := tl.login(t)
	tl.call(t, http.MethodPost, "/lab/stats/reset", nil, nil)
	if code := a.Do(http.MethodGet, "/api/esx/settings/no-such", nil, &e); code != http.StatusNotFound {
		t.Errorf("unknown route: %d", code)
	}
	if code := a.Do(http.MethodPut, "/api/esx/settings/depots/offline", nil, &e); code != http.StatusMethodNotAllowed {
		t.Errorf("wrong method: %d", code)
	}
	var clusters []map[string]interface{}
	a.Do(http.MethodGet, "/api/vcenter/cluster?names=gpu", nil, &clusters)
	if len(clusters) != 1 || clusters[0]["cluster"] != tl.clusters[0].Value {
		t.Errorf("clusters: %v", clusters)
	}
	var hosts []map[string]string
	a.Do(http.MethodGet, "/api/vcenter/host?clusters="+tl.clusters[0].Value, nil, &hosts)
	if len(hosts) != 2 || hosts[0]["name"] != "esxi-01" || hosts[1]["connection_state"] != "CONNECTED" {
		t.Errorf("hosts: %v", hosts)
	}
	var stats stats.Snapshot
	tl.call(t, http.MethodGet, "/lab/stats", nil, &stats)
	if stats.RESTByRoute["GET /api/vcenter/host"] != 1 || stats.RESTByRoute["GET /api/vcenter/cluster"] != 1 {
		t.Errorf("REST requests are counted by their route template: %v", stats.RESTByRoute)
	}
}

// A powered-on vGPU VM without vGPU vMotion keeps its host from entering maintenance mode: the check says so,
// and remediation fails on that host and skips the rest.
func TestRemediationFailsOnHostThatCannotEvacuate(t *testing.T) {
	tl := startLab(t)
	tl.vlcm.SetRemediationDelay(0)
	c := tl.client(t)
	ctx := context.Background()
	tl.runVGPU(t, ctx, c)
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)

	check := a.Task(http.MethodPost, base+"?action=check&vmw-task=true", map[string]interface{}{})
	result := check.Result.(map[string]interface{})
	if result["status"] != "ERROR" || !strings.Contains(labtest.JSON(t, result), "vgpu.hotmigrate.enabled is false") {
		t.Errorf("check: %s", labtest.JSON(t, result))
	}
	info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
	if info.Status != "FAILED" || !strings.Contains(labtest.ErrorText(info), "Host esxi-01 cannot enter maintenance mode") ||
		!strings.Contains(labtest.ErrorText(info), "vm-1") {
		t.Fatalf("apply: %s", labtest.ErrorText(info))
	}
	data := info.Error.Data.(map[string]interface{})
	if failed, skipped := data["failed_hosts"].([]interface{}), data["skipped_hosts"].([]interface{}); len(failed) != 1 ||
		failed[0] != tl.hosts[0].Ref.Value || len(skipped) != 1 || skipped[0] != tl.hosts[1].Ref.Value {
		t.Errorf("apply result: %s", labtest.JSON(t, data))
	}
	s := tl.state(t)
	if s.Hosts[0].Components[driver] != "" || s.Hosts[1].Components[driver] != "" || s.Hosts[0].MaintenanceMode {
		t.Errorf("no host may change: %+v %+v", s.Hosts[0], s.Hosts[1])
	}
	var last struct {
		Status     struct{ Status string }
		HostStatus map[string]struct{ Status string } `json:"host_status"`
	}
	if code := a.Do(http.MethodGet, base+"/reports/last-apply-result", nil, &last); code != http.StatusOK ||
		last.Status.Status != "ERROR" || last.HostStatus[tl.hosts[0].Ref.Value].Status != "ERROR" {
		t.Errorf("last apply result: %d %+v", code, last)
	}
}

// With POWER_OFF_VMS or SUSPEND_VMS a powered-on vGPU VM that cannot move does not stop remediation: it is powered
// off or suspended, the host is remediated, and the VM runs again on the same host.
func TestRemediationPowerActionsOnVGPUVMs(t *testing.T) {
	for _, action := range []string{"POWER_OFF_VMS", "SUSPEND_VMS"} {
		t.Run(action, func(t *testing.T) {
			tl := startLab(t)
			tl.vlcm.SetRemediationDelay(0)
			c := tl.client(t)
			tl.runVGPU(t, context.Background(), c)
			a := tl.login(t)
			base := imageWithDriver(t, tl, a)
			policy := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/policies/apply"
			a.Do(http.MethodPut, policy, map[string]interface{}{"pre_remediation_power_action": action}, nil)
			check := a.Task(http.MethodPost, base+"?action=check&vmw-task=true", map[string]interface{}{})
			if status := check.Result.(map[string]interface{})["status"]; status != "OK" {
				t.Errorf("the pre-check counts the VM that the policy stops: %s", labtest.JSON(t, check.Result))
			}
			info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
			if info.Status != "SUCCEEDED" {
				t.Fatalf("apply: %s", labtest.ErrorText(info))
			}
			s := tl.state(t)
			vm := s.VMs[0]
			if vm.PowerState != string(types.VirtualMachinePowerStatePoweredOn) || vm.Host != s.Hosts[0].Name ||
				len(vm.VGPUs) != 1 || vm.VGPUs[0].GPU == nil || s.Hosts[0].Components[driver] != version {
				t.Errorf("VM after remediation: %+v, host %+v", vm, s.Hosts[0])
			}
			// The record: started under no driver, stopped before the image, the host's new image, started again under
			// the new driver; then the second host's image.
			var got []string
			for _, e := range s.VGPUEvents {
				got = append(got, e.Event+" "+e.VM+" "+e.HostDriver)
			}
			want := []string{"vgpu_start " + vm.Name + " ", "vgpu_stop " + vm.Name + " ", "host_image  " + version,
				"vgpu_start " + vm.Name + " " + version, "host_image  " + version}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("vGPU events: %q, want %q", got, want)
			}
		})
	}
}
