package vlcm

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/jsonhttp"
	"vcsim/vapi"
)

// vLCM's remediation settings for a cluster (policies/apply) and its image commits, as the vSphere Automation API
// 8.0.2 describes them (tests/fixtures/specs/vsphere-8.0.2-esx.json: EsxSettingsClustersPoliciesApply*,
// EsxSettingsClustersSoftwareCommitsInfo). A cluster starts with nothing configured; the effective policy is the
// configured one over the global defaults below. What the lab does with each setting:
//   - pre_remediation_power_action: before a host enters maintenance mode its powered-on VMs are powered off
//     (POWER_OFF_VMS) or suspended (SUSPEND_VMS, SUSPEND_VMS_TO_MEMORY), and powered on or resumed on the same host
//     once it left maintenance mode. That vLCM restores them afterwards is not confirmed by VMware's documentation.
//   - evacuate_offline_vms: maintenance mode moves powered-off and suspended VMs too (EvacuatePoweredOffVms).
//   - failure_action RETRY: entering maintenance mode is tried retry_count more times, retry_delay seconds apart.
//   - disable_dpm, disable_hac, enable_quick_boot, enforce_hcl_validation, parallel_remediation_action: kept and
//     returned only; the lab has no DPM standby, HA admission control, Quick Boot or HCL to act on.
// The global defaults follow the vSphere Client's remediation settings dialog (do not change VM power state, DPM
// off during remediation), read from VMware's documentation and not confirmed against a vCenter, with one
// difference: the dialog's default on a maintenance mode failure is to retry (3 times, 5 minutes apart); the lab
// fails at once unless the cluster's policy asks for RETRY, so that tests of failing hosts do not wait.

const (
	powerOffVMs         = "POWER_OFF_VMS"
	suspendVMs          = "SUSPEND_VMS"
	doNotChangeVMsPower = "DO_NOT_CHANGE_VMS_POWER_STATE"
	suspendVMsToMemory  = "SUSPEND_VMS_TO_MEMORY"
)

type failureActionJSON struct {
	Action     string `json:"action"`
	RetryDelay *int64 `json:"retry_delay,omitempty"`
	RetryCount *int64 `json:"retry_count,omitempty"`
}

type parallelActionJSON struct {
	Enabled  bool   `json:"enabled"`
	MaxHosts *int64 `json:"max_hosts,omitempty"`
}

// applyPolicy is EsxSettingsClustersPoliciesApplyConfiguredPolicySpec: every field may be unset.
type applyPolicy struct {
	FailureAction        *failureActionJSON  `json:"failure_action,omitempty"`
	PowerAction          *string             `json:"pre_remediation_power_action,omitempty"`
	EnableQuickBoot      *bool               `json:"enable_quick_boot,omitempty"`
	DisableDPM           *bool               `json:"disable_dpm,omitempty"`
	DisableHAC           *bool               `json:"disable_hac,omitempty"`
	EvacuateOfflineVMs   *bool               `json:"evacuate_offline_vms,omitempty"`
	EnforceHCLValidation *bool               `json:"enforce_hcl_validation,omitempty"`
	ParallelRemediation  *parallelActionJSON `json:"parallel_remediation_action,omitempty"`
}

func boolp(v bool) *bool    { return &v }
func strp(v string) *string { return &v }

func globalApplyPolicy() applyPolicy {
	return applyPolicy{
		FailureAction: &failureActionJSON{Action: "FAIL"},
		PowerAction:   strp(doNotChangeVMsPower), EnableQuickBoot: boolp(false), DisableDPM: boolp(true),
		DisableHAC: boolp(false), EvacuateOfflineVMs: boolp(false), EnforceHCLValidation: boolp(false),
		ParallelRemediation: &parallelActionJSON{Enabled: false},
	}
}

// effective lays the configured fields over the global defaults.
func (p applyPolicy) effective() applyPolicy {
	e := globalApplyPolicy()
	if p.FailureAction != nil {
		e.FailureAction = p.FailureAction
	}
	if p.PowerAction != nil {
		e.PowerAction = p.PowerAction
	}
	for _, pair := range [][2]**bool{{&e.EnableQuickBoot, &p.EnableQuickBoot}, {&e.DisableDPM, &p.DisableDPM},
		{&e.DisableHAC, &p.DisableHAC}, {&e.EvacuateOfflineVMs, &p.EvacuateOfflineVMs},
		{&e.EnforceHCLValidation, &p.EnforceHCLValidation}} {
		if *pair[1] != nil {
			*pair[0] = *pair[1]
		}
	}
	if p.ParallelRemediation != nil {
		e.ParallelRemediation = p.ParallelRemediation
	}
	return e
}

func (p applyPolicy) check() *vapi.Err {
	if p.PowerAction != nil {
		switch *p.PowerAction {
		case powerOffVMs, suspendVMs, doNotChangeVMsPower, suspendVMsToMemory:
		default:
			return vapi.NewErr("INVALID_ARGUMENT", "pre_remediation_power_action %q is not one of %s, %s, %s, %s.",
				*p.PowerAction, powerOffVMs, suspendVMs, doNotChangeVMsPower, suspendVMsToMemory)
		}
	}
	if f := p.FailureAction; f != nil {
		if f.Action != "FAIL" && f.Action != "RETRY" {
			return vapi.NewErr("INVALID_ARGUMENT", "failure_action.action %q is not FAIL or RETRY.", f.Action)
		}
		if (f.RetryCount != nil && *f.RetryCount < 0) || (f.RetryDelay != nil && *f.RetryDelay < 0) {
			return vapi.NewErr("INVALID_ARGUMENT", "failure_action.retry_count and retry_delay cannot be negative.")
		}
	}
	return nil
}

// imageCommit is one commit of a cluster's desired image, kept so that a cluster can go back to it.
type imageCommit struct {
	author, description string
	time                time.Time
	baseImage           string
	components          map[string]string
	applied             bool
}

func (v *Manager) policyRoutes(rt *vapi.Router) {
	rt.Add(http.MethodGet, clusterPath+"/policies/apply", v.getApplyPolicy)
	rt.Add(http.MethodPut, clusterPath+"/policies/apply", v.setApplyPolicy)
	rt.Add(http.MethodGet, clusterPath+"/policies/apply/effective", v.getEffectivePolicy)
	rt.Add(http.MethodGet, clusterPath+"/software/commits/{commit}", v.getCommit)
}

func (v *Manager) getApplyPolicy(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, img := v.cluster(c); img != nil {
		jsonhttp.Write(c.W, http.StatusOK, img.policy)
	}
}

func (v *Manager) getEffectivePolicy(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, img := v.cluster(c); img != nil {
		jsonhttp.Write(c.W, http.StatusOK, img.policy.effective())
	}
}

func (v *Manager) setApplyPolicy(c *vapi.Call) {
	var spec applyPolicy
	if !c.Decode(&spec) {
		return
	}
	if e := spec.check(); e != nil {
		c.Fail(e)
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.cluster(c)
	if img == nil {
		return
	}
	img.policy = spec
	v.lab.Logf("vLCM: cluster %s remediation policy set (VM power action %s)", name(ref),
		*img.policy.effective().PowerAction)
	c.W.WriteHeader(http.StatusNoContent)
}

type commitInfoJSON struct {
	Author      string `json:"author"`
	CommitTime  string `json:"commit_time"`
	Description string `json:"description"`
	ApplyStatus string `json:"apply_status"`
}

func (v *Manager) getCommit(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil {
		return
	}
	id, err := strconv.Atoi(c.Params["commit"])
	commit := img.commits[id]
	if err != nil || commit == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "Cluster %s has no image commit %s.", name(ref), c.Params["commit"]))
		return
	}
	status := "NOT_APPLIED"
	if commit.applied {
		status = "APPLIED"
	}
	jsonhttp.Write(c.W, http.StatusOK, commitInfoJSON{Author: commit.author, CommitTime: vapi.Time(commit.time),
		Description: commit.description, ApplyStatus: status})
}

// record keeps the image as it is now under its commit number.
func (img *clusterImage) record(author, description string) {
	if img.commits == nil {
		img.commits = map[int]*imageCommit{}
	}
	img.commits[img.commit] = &imageCommit{author: author, description: description, time: time.Now(),
		baseImage: img.baseImage, components: copyMap(img.components)}
}

// ImageCommit is one commit of a cluster's image in GET /lab/state.
type ImageCommit struct {
	Commit      string            `json:"commit"`
	Author      string            `json:"author"`
	Description string            `json:"description"`
	Applied     bool              `json:"applied"`
	Image       map[string]string `json:"image"` // every component, base image included
}

// commitHistory is the image commits for /lab/state, oldest first.
func (img *clusterImage) commitHistory() []ImageCommit {
	ids := make([]int, 0, len(img.commits))
	for id := range img.commits {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	out := make([]ImageCommit, 0, len(ids))
	for _, id := range ids {
		commit := img.commits[id]
		components := copyMap(commit.components)
		components[BaseImageComponent] = commit.baseImage
		out = append(out, ImageCommit{Commit: strconv.Itoa(id), Author: commit.author,
			Description: commit.description, Applied: commit.applied, Image: components})
	}
	return out
}

// stopsVMs tells whether a pre-remediation power action powers off or suspends the host's running VMs.
func stopsVMs(action string) bool {
	return action == powerOffVMs || action == suspendVMs || action == suspendVMsToMemory
}

// powerAction powers off or suspends the powered-on VMs of a host as the policy asks, before maintenance mode;
// it returns the VMs it changed and why it failed (""). The caller holds the lock.
func (v *Manager) powerAction(host types.ManagedObjectReference, action string) ([]types.ManagedObjectReference, string) {
	if !stopsVMs(action) {
		return nil, ""
	}
	state, done := types.VirtualMachinePowerStateSuspended, "suspended"
	if action == powerOffVMs {
		state, done = types.VirtualMachinePowerStatePoweredOff, "powered off"
	}
	var changed []types.ManagedObjectReference
	for _, vm := range v.lab.PoweredOnVMs(host) {
		if !v.lab.SetPower(vm, state) {
			return changed, fmt.Sprintf("VM %s could not be %s before maintenance mode.", name(vm), done)
		}
		v.lab.Logf("vLCM: VM %s %s before remediation", name(vm), done)
		changed = append(changed, vm)
	}
	return changed, ""
}

// restorePower powers on (or resumes) on their host the VMs powerAction changed; it returns the VMs that would
// not start. The caller holds the lock.
func (v *Manager) restorePower(vms []types.ManagedObjectReference) []string {
	var failed []string
	for _, vm := range vms {
		if !v.lab.SetPower(vm, types.VirtualMachinePowerStatePoweredOn) {
			failed = append(failed, name(vm))
			continue
		}
		v.lab.Logf("vLCM: VM %s running again after remediation", name(vm))
	}
	return failed
}

// enterWithRetries puts a host into maintenance mode as the policy says: once, or with RETRY up to retry_count more
// times, retry_delay seconds apart (the lock is let go while waiting). It returns why it failed, or "". The caller holds
// the lock.
func (v *Manager) enterWithRetries(host types.ManagedObjectReference, policy applyPolicy) string {
	why := v.lab.MaintenanceMode(host, true, *policy.EvacuateOfflineVMs)
	if f := policy.FailureAction; why != "" && f.Action == "RETRY" && f.RetryCount != nil {
		delay := time.Duration(0)
		if f.RetryDelay != nil {
			delay = time.Duration(*f.RetryDelay) * time.Second
		}
		for try := int64(0); try < *f.RetryCount && why != ""; try++ {
			v.mu.Unlock()
			alive := v.lab.Pause(delay)
			v.mu.Lock()
			if !alive {
				return "The lab was reset while waiting to retry maintenance mode."
			}
			why = v.lab.MaintenanceMode(host, true, *policy.EvacuateOfflineVMs)
		}
	}
	return why
}

// HostDriver is the version of the NVIDIA vGPU host driver component (NVD-VGPU-*, NVD-AIE-*) a host runs, or "".
func (v *Manager) HostDriver(host types.ManagedObjectReference) string {
	for name, version := range v.installed[host] {
		if strings.HasPrefix(name, "NVD-VGPU-") || strings.HasPrefix(name, "NVD-AIE-") {
			return version
		}
	}
	return ""
}
