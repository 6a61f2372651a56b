package vlcm

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/faults"
	"vcsim/labtest"
	"vcsim/vapi"
)

func TestApplyPolicyConfiguredAndEffective(t *testing.T) {
	tl := startLab(t)
	a := tl.login()
	base := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/policies/apply"
	var configured, effective map[string]interface{}
	a.Do(http.MethodGet, base, nil, &configured)
	a.Do(http.MethodGet, base+"/effective", nil, &effective)
	if len(configured) != 0 || effective["pre_remediation_power_action"] != doNotChangeVMsPower ||
		effective["disable_dpm"] != true || effective["evacuate_offline_vms"] != false {
		t.Errorf("at start: configured %v, effective %v", configured, effective)
	}
	if code := a.Do(http.MethodPut, base, map[string]interface{}{"pre_remediation_power_action": suspendVMs,
		"evacuate_offline_vms": true}, nil); code != http.StatusNoContent {
		t.Fatalf("set: %d", code)
	}
	a.Do(http.MethodGet, base, nil, &configured)
	a.Do(http.MethodGet, base+"/effective", nil, &effective)
	if configured["pre_remediation_power_action"] != suspendVMs || configured["disable_dpm"] != nil ||
		effective["pre_remediation_power_action"] != suspendVMs || effective["evacuate_offline_vms"] != true ||
		effective["disable_dpm"] != true {
		t.Errorf("after set: configured %v, effective %v", configured, effective)
	}
	var e vapi.Err
	if code := a.Do(http.MethodPut, base, map[string]interface{}{"pre_remediation_power_action": "HIBERNATE"}, &e); code != http.StatusBadRequest ||
		e.ErrorType != "INVALID_ARGUMENT" || !strings.Contains(e.Error(), "HIBERNATE") {
		t.Errorf("unknown power action: %d %+v", code, e)
	}
	if code := a.Do(http.MethodPut, base, map[string]interface{}{"failure_action": map[string]interface{}{"action": "PRAY"}}, &e); code != http.StatusBadRequest {
		t.Errorf("unknown failure action: %d", code)
	}
	if code := a.Do(http.MethodGet, "/api/esx/settings/clusters/domain-c999/policies/apply", nil, &e); code != http.StatusNotFound {
		t.Errorf("unknown cluster: %d", code)
	}
}

// Commits are kept with their image: a cluster can see where it was and go back; a commit is APPLIED once every
// host of the cluster complies with it.
func TestImageCommitsAreKept(t *testing.T) {
	tl := startLab(t)
	a := tl.login()
	base := a.CommitImage(tl.clusters[0].Value, driver+"="+version)
	cluster := tl.cluster()
	history := cluster.Commits
	if cluster.Commit != "2" || len(history) != 2 || history[0].Image[driver] != "" ||
		history[1].Image[driver] != version || history[1].Author != "lab" || history[0].Image["ESXi"] != defaultBaseImage {
		t.Fatalf("history after one commit: %s %v", cluster.Commit, history)
	}
	var info commitInfoJSON
	if code := a.Do(http.MethodGet, base+"/commits/2", nil, &info); code != http.StatusOK || info.ApplyStatus != "NOT_APPLIED" ||
		info.Author != "lab" {
		t.Errorf("commit 2 before apply: %d %+v", code, info)
	}
	if applied := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true}); applied.Status != "SUCCEEDED" {
		t.Fatal(labtest.ErrorText(applied))
	}
	a.Do(http.MethodGet, base+"/commits/2", nil, &info)
	var first commitInfoJSON
	a.Do(http.MethodGet, base+"/commits/1", nil, &first)
	if info.ApplyStatus != "APPLIED" || first.ApplyStatus != "NOT_APPLIED" || first.Description != "Initial image" {
		t.Errorf("after apply: %+v %+v", info, first)
	}
	var e vapi.Err
	if code := a.Do(http.MethodGet, base+"/commits/9", nil, &e); code != http.StatusNotFound || e.ErrorType != "NOT_FOUND" {
		t.Errorf("unknown commit: %d %+v", code, e)
	}
}

// With POWER_OFF_VMS or SUSPEND_VMS the powered-on VMs of a host are powered off or suspended before maintenance
// mode and run again on the same host afterwards.
func TestRemediationPowerActions(t *testing.T) {
	for _, action := range []string{powerOffVMs, suspendVMs} {
		t.Run(action, func(t *testing.T) {
			tl := startLab(t)
			a := tl.login()
			base := a.CommitImage(tl.clusters[0].Value, driver+"="+version)
			policy := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/policies/apply"
			a.Do(http.MethodPut, policy, map[string]interface{}{"pre_remediation_power_action": action}, nil)
			tl.mu.Lock()
			on := 0 // the cluster host the simulator placed the cluster's VM on
			vms := tl.PoweredOnVMs(tl.hosts[on].Ref)
			if len(vms) == 0 {
				on = 1
				vms = tl.PoweredOnVMs(tl.hosts[on].Ref)
			}
			tl.mu.Unlock()
			if len(vms) != 1 {
				t.Fatalf("powered-on VMs in the cluster: %v", vms)
			}
			info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
			if info.Status != "SUCCEEDED" {
				t.Fatalf("apply: %s", labtest.ErrorText(info))
			}
			tl.mu.Lock()
			vm := simulator.Map.Get(vms[0]).(*simulator.VirtualMachine)
			state, host := vm.Runtime.PowerState, *vm.Runtime.Host
			tl.mu.Unlock()
			if state != types.VirtualMachinePowerStatePoweredOn || host != tl.hosts[on].Ref || tl.installed(on)[driver] != version {
				t.Errorf("VM after remediation: %s on %s, host runs %v", state, host.Value, tl.installed(on))
			}
			stopped := map[string]string{powerOffVMs: "poweredOff", suspendVMs: "suspended"}[action]
			if want := []string{vm.Name + " " + stopped, vm.Name + " poweredOn"}; strings.Join(tl.power, "|") != strings.Join(want, "|") {
				t.Errorf("power changes: %q, want %q", tl.power, want)
			}
		})
	}
}

// An injected remediation failure stops the apply on that host: it keeps its components and stays in maintenance
// mode, the hosts after it are skipped.
func TestInjectedRemediationFailure(t *testing.T) {
	tl := startLab(t)
	a := tl.login()
	base := a.CommitImage(tl.clusters[0].Value, driver+"="+version)
	first := tl.hosts[0].Name
	if err := (&faults.Fault{Kind: faults.FailRemediation, VM: "vm-1", Host: first}).Validate(func(string) bool { return true }); err == nil {
		t.Errorf("fail_remediation with a vm is accepted")
	}
	f := faults.Fault{Kind: faults.FailRemediation, Host: first}
	if err := f.Validate(func(string) bool { return true }); err != nil || f.Count != 1 {
		t.Fatalf("fault: %v %+v", err, f)
	}
	tl.faults.Add(f)
	info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
	if info.Status != "FAILED" || !strings.Contains(labtest.ErrorText(info), "installing the image failed") {
		t.Fatalf("apply: %s", labtest.ErrorText(info))
	}
	if tl.installed(0)[driver] != "" || !tl.inMaintenance(0) || tl.installed(1)[driver] != "" {
		t.Errorf("hosts after the failure: %v %v", tl.installed(0), tl.installed(1))
	}
	if again := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true}); again.Status != "SUCCEEDED" {
		t.Errorf("the fault is used up, the next apply succeeds: %s", labtest.ErrorText(again))
	}
}
