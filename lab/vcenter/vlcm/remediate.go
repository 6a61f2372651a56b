package vlcm

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/faults"
	"vcsim/jsonhttp"
	"vcsim/vapi"
)

// Compliance scan, pre-checks and remediation (apply) of a cluster against its desired image. Remediation works
// as vLCM's: one host at a time into maintenance mode (by the lab's maintenance rules: DRS must be able to move
// every powered-on VM), install the image, out of maintenance mode. A host that fails stops the remediation; the
// hosts after it are skipped and stay as they were.

func (v *Manager) remediationRoutes(rt *vapi.Router) {
	rt.Add(http.MethodPost, clusterPath+"/software?action=scan&vmw-task=true", v.scan)
	rt.Add(http.MethodPost, clusterPath+"/software?action=check&vmw-task=true", v.check)
	rt.Add(http.MethodPost, clusterPath+"/software?action=apply&vmw-task=true", v.apply)
	rt.Add(http.MethodGet, clusterPath+"/software/compliance", v.getCompliance)
	rt.Add(http.MethodGet, clusterPath+"/software/reports/last-apply-result", v.getLastApply)
}

type hostInfoJSON struct {
	Name string `json:"name"`
}

type componentComplianceJSON struct {
	Status        string             `json:"status"`
	Current       *componentInfoJSON `json:"current,omitempty"`
	Target        *componentInfoJSON `json:"target,omitempty"`
	CurrentSource string             `json:"current_source,omitempty"`
	TargetSource  string             `json:"target_source,omitempty"`
	Notifications notificationsJSON  `json:"notifications"`
}

type baseImageComplianceJSON struct {
	Status        string            `json:"status"`
	Current       baseImageInfoJSON `json:"current"`
	Target        baseImageInfoJSON `json:"target"`
	Notifications notificationsJSON `json:"notifications"`
}

type hostComplianceJSON struct {
	Impact        string                             `json:"impact"`
	Status        string                             `json:"status"`
	Notifications notificationsJSON                  `json:"notifications"`
	ScanTime      string                             `json:"scan_time"`
	Commit        string                             `json:"commit"`
	BaseImage     baseImageComplianceJSON            `json:"base_image"`
	AddOn         map[string]interface{}             `json:"add_on"`
	Components    map[string]componentComplianceJSON `json:"components"`
	Solutions     map[string]interface{}             `json:"solutions"`
}

type clusterCompliance struct {
	Impact            string                        `json:"impact"`
	Status            string                        `json:"status"`
	Notifications     notificationsJSON             `json:"notifications"`
	ScanTime          string                        `json:"scan_time"`
	Commit            string                        `json:"commit"`
	CompliantHosts    []string                      `json:"compliant_hosts"`
	NonCompliantHosts []string                      `json:"non_compliant_hosts"`
	IncompatibleHosts []string                      `json:"incompatible_hosts"`
	UnavailableHosts  []string                      `json:"unavailable_hosts"`
	Hosts             map[string]hostComplianceJSON `json:"hosts"`
	HostInfo          map[string]hostInfoJSON       `json:"host_info"`
}

type applyStatusJSON struct {
	Status        string             `json:"status"`
	Progress      *vapi.TaskProgress `json:"progress,omitempty"`
	StartTime     string             `json:"start_time"`
	EndTime       string             `json:"end_time"`
	Notifications notificationsJSON  `json:"notifications"`
}

type applyResult struct {
	Status          applyStatusJSON            `json:"status"`
	Commit          string                     `json:"commit"`
	HostInfo        map[string]hostInfoJSON    `json:"host_info"`
	HostStatus      map[string]applyStatusJSON `json:"host_status"`
	SuccessfulHosts []string                   `json:"successful_hosts"`
	FailedHosts     []string                   `json:"failed_hosts"`
	SkippedHosts    []string                   `json:"skipped_hosts"`
}

// target is the image a scan or remediation works towards: the effective components and the commit.
type target struct {
	base       string
	components map[string]string
	commit     string
	policy     applyPolicy // effective remediation settings
}

func (img *clusterImage) target() target {
	return target{base: img.baseImage, components: img.effective(), commit: strconv.Itoa(img.commit),
		policy: img.policy.effective()}
}

// hostCompliance compares what a host runs with the target image. The caller holds the lock.
func (v *Manager) hostCompliance(ref types.ManagedObjectReference, t target) hostComplianceJSON {
	installed := v.installed[ref]
	available := v.available()
	now := vapi.Time(time.Now())
	hc := hostComplianceJSON{Impact: "NO_IMPACT", Status: "COMPLIANT", Notifications: noNotifications(),
		ScanTime: now, Commit: t.commit, AddOn: map[string]interface{}{"status": "COMPLIANT",
			"notifications": noNotifications()}, Components: map[string]componentComplianceJSON{},
		Solutions: map[string]interface{}{}}
	hc.BaseImage = baseImageComplianceJSON{Status: "COMPLIANT", Current: v.baseImageInfo(installed[BaseImageComponent]),
		Target: v.baseImageInfo(t.base), Notifications: noNotifications()}
	if installed[BaseImageComponent] != t.base {
		hc.BaseImage.Status = "NON_COMPLIANT"
	}
	names := map[string]bool{}
	for n := range installed {
		names[n] = true
	}
	for n := range t.components {
		names[n] = true
	}
	for _, n := range sortedSet(names) {
		cc := componentComplianceJSON{Status: "COMPLIANT", Notifications: noNotifications()}
		source := "USER"
		if n == BaseImageComponent {
			source = "BASE_IMAGE"
		}
		if version, ok := installed[n]; ok {
			info := componentInfo(available, n, version)
			cc.Current, cc.CurrentSource = &info, source
		}
		if version, ok := t.components[n]; ok {
			info := componentInfo(available, n, version)
			cc.Target, cc.TargetSource = &info, source
		}
		if installed[n] != t.components[n] {
			cc.Status = "NON_COMPLIANT"
			hc.Status, hc.Impact = "NON_COMPLIANT", "REBOOT_REQUIRED"
		}
		hc.Components[n] = cc
	}
	return hc
}

// scanCluster is the cluster's compliance with the target, for every host. The caller holds the lock.
func (v *Manager) scanCluster(ref types.ManagedObjectReference, t target) *clusterCompliance {
	cc := &clusterCompliance{Impact: "NO_IMPACT", Status: "COMPLIANT", Notifications: noNotifications(),
		ScanTime: vapi.Time(time.Now()), Commit: t.commit, CompliantHosts: []string{}, NonCompliantHosts: []string{},
		IncompatibleHosts: []string{}, UnavailableHosts: []string{}, Hosts: map[string]hostComplianceJSON{},
		HostInfo: map[string]hostInfoJSON{}}
	for _, host := range v.clusterHosts(ref) {
		obj := hostObject(host)
		cc.HostInfo[host.Value] = hostInfoJSON{Name: obj.Name}
		if obj.Runtime.ConnectionState != types.HostSystemConnectionStateConnected {
			cc.UnavailableHosts = append(cc.UnavailableHosts, host.Value)
			continue
		}
		hc := v.hostCompliance(host, t)
		cc.Hosts[host.Value] = hc
		if hc.Status == "COMPLIANT" {
			cc.CompliantHosts = append(cc.CompliantHosts, host.Value)
		} else {
			cc.NonCompliantHosts = append(cc.NonCompliantHosts, host.Value)
			cc.Status, cc.Impact = "NON_COMPLIANT", hc.Impact
		}
	}
	if len(cc.NonCompliantHosts) == 0 && len(cc.UnavailableHosts) > 0 {
		cc.Status = "UNAVAILABLE"
	}
	return cc
}

func (v *Manager) clusterHosts(ref types.ManagedObjectReference) []types.ManagedObjectReference {
	cluster, ok := simulator.Map.Get(ref).(*simulator.ClusterComputeResource)
	if !ok {
		return nil
	}
	return append([]types.ManagedObjectReference(nil), cluster.Host...)
}

func (v *Manager) scan(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil {
		return
	}
	v.tasks.Start(c, softwareService, "scan", clusterTarget(ref), func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.mu.Lock()
		defer v.mu.Unlock()
		img.compliance = v.scanCluster(ref, img.target())
		return img.compliance, nil
	})
}

func (v *Manager) getCompliance(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil {
		return
	}
	if img.compliance == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "Cluster %s has not been scanned yet: no compliance information.", name(ref)))
		return
	}
	jsonhttp.Write(c.W, http.StatusOK, img.compliance)
}

func (v *Manager) getLastApply(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil {
		return
	}
	if img.lastApply == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "The image of cluster %s has not been applied yet.", name(ref)))
		return
	}
	jsonhttp.Write(c.W, http.StatusOK, img.lastApply)
}

type remediationSpec struct {
	Commit     *string  `json:"commit"`
	Hosts      []string `json:"hosts"`
	AcceptEULA *bool    `json:"accept_eula"`
}

// targetHosts resolves spec.hosts (all hosts of the cluster when empty), in the cluster's order. It answers 404
// itself for a host outside the cluster.
func (v *Manager) targetHosts(c *vapi.Call, ref types.ManagedObjectReference,
	hosts []string) ([]types.ManagedObjectReference, bool) {
	all := v.clusterHosts(ref)
	if len(hosts) == 0 {
		return all, true
	}
	wanted := map[string]bool{}
	for _, h := range hosts {
		wanted[h] = true
	}
	var out []types.ManagedObjectReference
	for _, h := range all {
		if wanted[h.Value] {
			out = append(out, h)
			delete(wanted, h.Value)
		}
	}
	if len(wanted) > 0 {
		c.Fail(vapi.NewErr("NOT_FOUND", "Hosts %s are not in cluster %s.", strings.Join(sortedSet(wanted), ", "),
			name(ref)))
		return nil, false
	}
	return out, true
}

// check runs the pre-checks of a remediation: each host that needs the image must be connected and able to enter
// maintenance mode (its powered-on VMs must be movable), and the image must be valid.
func (v *Manager) check(c *vapi.Call) {
	var spec remediationSpec
	if !c.Decode(&spec) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil || !v.idle(c, ref, img) {
		return
	}
	hosts, ok := v.targetHosts(c, ref, spec.Hosts)
	if !ok {
		return
	}
	img.busy = "check"
	v.tasks.Start(c, softwareService, "check", clusterTarget(ref), func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.mu.Lock()
		defer v.mu.Unlock()
		defer func() { img.busy = "" }()
		return v.runChecks(ref, img, hosts), nil
	})
}

func (v *Manager) idle(c *vapi.Call, ref types.ManagedObjectReference, img *clusterImage) bool {
	if img.busy != "" {
		c.Fail(vapi.NewErr("NOT_ALLOWED_IN_CURRENT_STATE", "Another operation (%s) is running on cluster %s.",
			img.busy, name(ref)))
		return false
	}
	return true
}

type checkInfoJSON struct {
	Check       string       `json:"check"`
	Name        vapi.Message `json:"name"`
	Description vapi.Message `json:"description"`
}

type checkStatusJSON struct {
	Check  checkInfoJSON  `json:"check"`
	Status string         `json:"status"`
	Issues []vapi.Message `json:"issues"`
}

type entityCheckJSON struct {
	Type          string            `json:"type"`
	Cluster       string            `json:"cluster,omitempty"`
	Host          string            `json:"host,omitempty"`
	Status        string            `json:"status"`
	CheckStatuses []checkStatusJSON `json:"check_statuses"`
}

func checkStatus(id, title string, issues []string) checkStatusJSON {
	s := checkStatusJSON{Check: checkInfoJSON{Check: id, Name: vapi.NewMessage(id+".name", "%s", title),
		Description: vapi.NewMessage(id+".description", "%s", title)}, Status: "OK", Issues: []vapi.Message{}}
	for _, issue := range issues {
		s.Issues = append(s.Issues, vapi.NewMessage(id+".issue", "%s", issue))
		s.Status = "ERROR"
	}
	return s
}

func entityResult(kind, id string, statuses ...checkStatusJSON) entityCheckJSON {
	e := entityCheckJSON{Type: kind, Status: "OK", CheckStatuses: statuses}
	if kind == "CLUSTER" {
		e.Cluster = id
	} else {
		e.Host = id
	}
	for _, s := range statuses {
		if s.Status == "ERROR" {
			e.Status = "ERROR"
		}
	}
	return e
}

// runChecks is the check task's work. The caller holds the lock.
func (v *Manager) runChecks(ref types.ManagedObjectReference, img *clusterImage,
	hosts []types.ManagedObjectReference) map[string]interface{} {
	started := time.Now()
	t := img.target()
	var imageIssues []string
	for _, n := range v.validate(img.baseImage, img.components) {
		imageIssues = append(imageIssues, n.Message.DefaultMessage)
	}
	results := []entityCheckJSON{entityResult("CLUSTER", ref.Value,
		checkStatus("com.vmware.lab.vlcm.check.image", "The desired image is valid", imageIssues))}
	status, hostInfo := "OK", map[string]hostInfoJSON{}
	for _, host := range hosts {
		obj := hostObject(host)
		hostInfo[host.Value] = hostInfoJSON{Name: obj.Name}
		var connection, maintenance []string
		if obj.Runtime.ConnectionState != types.HostSystemConnectionStateConnected {
			connection = append(connection, fmt.Sprintf("Host %s is %s.", obj.Name, obj.Runtime.ConnectionState))
		} else if v.hostCompliance(host, t).Status != "COMPLIANT" && !obj.Runtime.InMaintenanceMode &&
			!stopsVMs(*t.policy.PowerAction) {
			if why := v.lab.EvacuationBlocker(host, *t.policy.EvacuateOfflineVMs); why != "" {
				maintenance = append(maintenance, why)
			}
		}
		results = append(results, entityResult("HOST", host.Value,
			checkStatus("com.vmware.lab.vlcm.check.connection", "The host is connected", connection),
			checkStatus("com.vmware.lab.vlcm.check.maintenance", "The host can enter maintenance mode", maintenance)))
	}
	for _, r := range results {
		if r.Status == "ERROR" {
			status = "ERROR"
		}
	}
	return map[string]interface{}{"status": status, "start_time": vapi.Time(started), "end_time": vapi.Time(time.Now()),
		"commit": t.commit, "host_info": hostInfo, "entity_results": results}
}

// apply remediates the hosts one at a time. Without accept_eula the task fails before touching a host.
func (v *Manager) apply(c *vapi.Call) {
	var spec remediationSpec
	if !c.Decode(&spec) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil || !v.idle(c, ref, img) {
		return
	}
	hosts, ok := v.targetHosts(c, ref, spec.Hosts)
	if !ok {
		return
	}
	img.busy = "apply"
	eula := spec.AcceptEULA != nil && *spec.AcceptEULA
	v.tasks.Start(c, softwareService, "apply", clusterTarget(ref), func(t *vapi.Task) (interface{}, *vapi.Err) {
		defer func() {
			v.mu.Lock()
			img.busy = ""
			v.mu.Unlock()
		}()
		if !eula {
			return nil, vapi.NewErr("NOT_ALLOWED_IN_CURRENT_STATE", "The VMware End User License Agreement was not "+
				"accepted: set accept_eula to remediate cluster %s.", name(ref))
		}
		return v.remediate(t, ref, img, hosts)
	})
}

func (v *Manager) remediate(t *vapi.Task, ref types.ManagedObjectReference, img *clusterImage,
	hosts []types.ManagedObjectReference) (interface{}, *vapi.Err) {
	v.mu.Lock()
	want := img.target()
	started := time.Now()
	result := &applyResult{Commit: want.commit, HostInfo: map[string]hostInfoJSON{},
		HostStatus: map[string]applyStatusJSON{}, SuccessfulHosts: []string{}, FailedHosts: []string{},
		SkippedHosts: []string{}}
	total := int64(len(hosts))
	t.Total = total
	v.mu.Unlock()

	var failures []string
	for i, host := range hosts {
		v.mu.Lock()
		hostName := hostObject(host).Name
		result.HostInfo[host.Value] = hostInfoJSON{Name: hostName}
		hostStarted := time.Now()
		status, note := "OK", ""
		switch {
		case len(failures) > 0:
			status, note = "SKIPPED", "Skipped: the remediation stopped after a host failed."
		case v.hostCompliance(host, want).Status == "COMPLIANT":
			note = fmt.Sprintf("Host %s already runs the desired image.", hostName)
		default:
			v.mu.Unlock()
			status, note = v.remediateHost(t, host, hostName, want, int64(i), total)
			v.mu.Lock()
		}
		hs := applyStatusJSON{Status: status, StartTime: vapi.Time(hostStarted), EndTime: vapi.Time(time.Now()),
			Notifications: noNotifications(), Progress: &vapi.TaskProgress{Total: 1, Completed: 1,
				Message: vapi.NewMessage("com.vmware.lab.vlcm.apply.host", "%s", note)}}
		switch status {
		case "OK":
			hs.Notifications.Info = append(hs.Notifications.Info, notification("INFO",
				"com.vmware.lab.vlcm.apply.host.ok", "", "%s", note))
			result.SuccessfulHosts = append(result.SuccessfulHosts, host.Value)
		case "SKIPPED":
			hs.Notifications.Info = append(hs.Notifications.Info, notification("INFO",
				"com.vmware.lab.vlcm.apply.host.skipped", "", "%s", note))
			result.SkippedHosts = append(result.SkippedHosts, host.Value)
		default:
			hs.Notifications.Errors = append(hs.Notifications.Errors, notification("ERROR",
				"com.vmware.lab.vlcm.apply.host.failed", "Move or power off the virtual machines named, or "+
					"enable what they need to move, then remediate again.", "%s", note))
			result.FailedHosts = append(result.FailedHosts, host.Value)
			failures = append(failures, note)
		}
		result.HostStatus[host.Value] = hs
		if completed := int64(i + 1); completed > t.Completed {
			t.Completed = completed
		}
		t.Progress = fmt.Sprintf("%d of %d hosts remediated", i+1, total)
		v.mu.Unlock()
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	result.Status = applyStatusJSON{Status: "OK", StartTime: vapi.Time(started), EndTime: vapi.Time(time.Now()),
		Notifications: noNotifications()}
	if len(failures) > 0 {
		result.Status.Status = "ERROR"
	}
	img.lastApply = result
	img.compliance = v.scanCluster(ref, img.target())
	if commit := img.commits[img.commit]; commit != nil && want.commit == strconv.Itoa(img.commit) &&
		img.compliance.Status == "COMPLIANT" {
		commit.applied = true
	}
	if len(failures) > 0 {
		e := vapi.NewErr("ERROR", "Remediation of cluster %s failed: %s", name(ref), strings.Join(failures, " "))
		e.Data = result
		return nil, e
	}
	return result, nil
}

// remediateHost takes one host through maintenance mode and installs the image; it returns the host's apply
// status and a sentence for the user. It takes the lock itself.
func (v *Manager) remediateHost(t *vapi.Task, host types.ManagedObjectReference, hostName string, want target,
	done, total int64) (string, string) {
	v.mu.Lock()
	t.Progress = fmt.Sprintf("Host %s (%d of %d): entering maintenance mode", hostName, done+1, total)
	wasInMaintenance := hostObject(host).Runtime.InMaintenanceMode
	policy := want.policy
	stopped, why := v.powerAction(host, *policy.PowerAction)
	if why == "" {
		why = v.enterWithRetries(host, policy)
	}
	if why != "" {
		failed := v.restorePower(stopped)
		v.mu.Unlock()
		if len(failed) > 0 {
			why += fmt.Sprintf(" VMs %s stay off.", strings.Join(failed, ", "))
		}
		return "ERROR", why // the maintenance mode task's message names the host and the VMs
	}
	t.Progress = fmt.Sprintf("Host %s (%d of %d): installing the image", hostName, done+1, total)
	v.mu.Unlock()

	if !v.lab.Pause(v.remediationDelay) {
		return "ERROR", fmt.Sprintf("Host %s: the lab was reset during the installation.", hostName)
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	if v.lab.Faults().Take(faults.FailRemediation, hostName, "") != nil {
		v.lab.Logf("vLCM: host %s: installing the image failed (injected fault)", hostName)
		return "ERROR", fmt.Sprintf("Host %s: installing the image failed; the host keeps what it ran and stays "+
			"in maintenance mode.", hostName)
	}
	v.installed[host] = copyMap(want.components)
	v.lab.HostImageChanged(hostName, v.HostDriver(host))
	v.lab.Logf("vLCM: host %s now runs %v", hostName, want.components)
	if !wasInMaintenance {
		t.Progress = fmt.Sprintf("Host %s (%d of %d): exiting maintenance mode", hostName, done+1, total)
		if why := v.lab.MaintenanceMode(host, false, false); why != "" {
			return "ERROR", fmt.Sprintf("Host %s has the image but stays in maintenance mode: %s", hostName, why)
		}
	}
	if failed := v.restorePower(stopped); len(failed) > 0 {
		return "ERROR", fmt.Sprintf("Host %s runs the desired image, but VMs %s did not start again.", hostName,
			strings.Join(failed, ", "))
	}
	return "OK", fmt.Sprintf("Host %s runs the desired image.", hostName)
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
