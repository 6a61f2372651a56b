package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/faults"
	"vcsim/vapi"
)

func TestApplyPolicyConfiguredAndEffective(t *testing.T) {
	tl := startLab(t)
	a := tl.login(t)
	base := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/policies/apply"
	var configured, effective map[string]interface{}
	a.do(http.MethodGet, base, nil, &configured)
	a.do(http.MethodGet, base+"/effective", nil, &effective)
	if len(configured) != 0 || effective["pre_remediation_power_action"] != doNotChangeVMsPower ||
		effective["disable_dpm"] != true || effective["evacuate_offline_vms"] != false {
		t.Errorf("at start: configured %v, effective %v", configured, effective)
	}
	if code := a.do(http.MethodPut, base, map[string]interface{}{"pre_remediation_power_action": suspendVMs,
		"evacuate_offline_vms": true}, nil); code != http.StatusNoContent {
		t.Fatalf("set: %d", code)
	}
	a.do(http.MethodGet, base, nil, &configured)
	a.do(http.MethodGet, base+"/effective", nil, &effective)
	if configured["pre_remediation_power_action"] != suspendVMs || configured["disable_dpm"] != nil ||
		effective["pre_remediation_power_action"] != suspendVMs || effective["evacuate_offline_vms"] != true ||
		effective["disable_dpm"] != true {
		t.Errorf("after set: configured %v, effective %v", configured, effective)
	}
	var e vapi.Err
	if code := a.do(http.MethodPut, base, map[string]interface{}{"pre_remediation_power_action": "HIBERNATE"}, &e); code != http.StatusBadRequest ||
		e.ErrorType != "INVALID_ARGUMENT" || !strings.Contains(e.Error(), "HIBERNATE") {
		t.Errorf("unknown power action: %d %+v", code, e)
	}
	if code := a.do(http.MethodPut, base, map[string]interface{}{"failure_action": map[string]interface{}{"action": "PRAY"}}, &e); code != http.StatusBadRequest {
		t.Errorf("unknown failure action: %d", code)
	}
	if code := a.do(http.MethodGet, "/api/esx/settings/clusters/domain-c999/policies/apply", nil, &e); code != http.StatusNotFound {
		t.Errorf("unknown cluster: %d", code)
	}
}

// Commits are kept with their image: a cluster can see where it was and go back; a commit is APPLIED once every
// host of the cluster complies with it.
func TestImageCommitsAreKept(t *testing.T) {
	tl := startLab(t)
	tl.vlcm.remediationDelay = 0
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)
	s := tl.state(t)
	history := s.Clusters[0].ImageCommits
	if s.Clusters[0].ImageCommit != "2" || len(history) != 2 || history[0].Image[driver] != "" ||
		history[1].Image[driver] != version || history[1].Author != "lab" || history[0].Image["ESXi"] != defaultBaseImage {
		t.Fatalf("history after one commit: %s %v", s.Clusters[0].ImageCommit, history)
	}
	var info commitInfoJSON
	if code := a.do(http.MethodGet, base+"/commits/2", nil, &info); code != http.StatusOK || info.ApplyStatus != "NOT_APPLIED" ||
		info.Author != "lab" {
		t.Errorf("commit 2 before apply: %d %+v", code, info)
	}
	if applied := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true}); applied.Status != "SUCCEEDED" {
		t.Fatal(errorText(applied))
	}
	a.do(http.MethodGet, base+"/commits/2", nil, &info)
	var first commitInfoJSON
	a.do(http.MethodGet, base+"/commits/1", nil, &first)
	if info.ApplyStatus != "APPLIED" || first.ApplyStatus != "NOT_APPLIED" || first.Description != "Initial image" {
		t.Errorf("after apply: %+v %+v", info, first)
	}
	var e vapi.Err
	if code := a.do(http.MethodGet, base+"/commits/9", nil, &e); code != http.StatusNotFound || e.ErrorType != "NOT_FOUND" {
		t.Errorf("unknown commit: %d %+v", code, e)
	}
}

// With POWER_OFF_VMS or SUSPEND_VMS a powered-on vGPU VM that cannot move does not stop remediation: it is powered
// off or suspended, the host is remediated, and the VM runs again on the same host.
func TestRemediationPowerActions(t *testing.T) {
	for _, action := range []string{powerOffVMs, suspendVMs} {
		t.Run(action, func(t *testing.T) {
			tl := startLab(t)
			tl.vlcm.remediationDelay = 0
			c, err := tl.connect(t, "s3cret")
			if err != nil {
				t.Fatal(err)
			}
			tl.runVGPU(t, context.Background(), c)
			a := tl.login(t)
			base := imageWithDriver(t, tl, a)
			policy := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/policies/apply"
			a.do(http.MethodPut, policy, map[string]interface{}{"pre_remediation_power_action": action}, nil)
			check := a.task(http.MethodPost, base+"?action=check&vmw-task=true", map[string]interface{}{})
			if status := check.Result.(map[string]interface{})["status"]; status != "OK" {
				t.Errorf("the pre-check counts the VM that the policy stops: %s", mustJSON(t, check.Result))
			}
			info := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
			if info.Status != "SUCCEEDED" {
				t.Fatalf("apply: %s", errorText(info))
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

// An injected remediation failure stops the apply on that host: it keeps its components and stays in maintenance
// mode, the hosts after it are skipped.
func TestInjectedRemediationFailure(t *testing.T) {
	tl := startLab(t)
	tl.vlcm.remediationDelay = 0
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)
	first := tl.state(t).Hosts[0].Name
	if err := (&faults.Fault{Kind: faults.FailRemediation, VM: "vm-1", Host: first}).Validate(func(string) bool { return true }); err == nil {
		t.Errorf("fail_remediation with a vm is accepted")
	}
	f := faults.Fault{Kind: faults.FailRemediation, Host: first}
	if err := f.Validate(func(string) bool { return true }); err != nil || f.Count != 1 {
		t.Fatalf("fault: %v %+v", err, f)
	}
	tl.faults.Add(f)
	info := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
	if info.Status != "FAILED" || !strings.Contains(errorText(info), "installing the image failed") {
		t.Fatalf("apply: %s", errorText(info))
	}
	s := tl.state(t)
	if s.Hosts[0].Components[driver] != "" || !s.Hosts[0].MaintenanceMode || s.Hosts[1].Components[driver] != "" {
		t.Errorf("hosts after the failure: %+v %+v", s.Hosts[0], s.Hosts[1])
	}
	if again := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true}); again.Status != "SUCCEEDED" {
		t.Errorf("the fault is used up, the next apply succeeds: %s", errorText(again))
	}
}
