package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vcsim/labtest"
	"vcsim/stats"
	"vcsim/vapi"
)

const (
	driver  = "NVD-VGPU-800"
	version = "525.105.14-1OEM.800.1.0.20613240"
	daemon  = "nvd-gpu-mgmt-daemon"
)

// api is a logged-in REST session on a test lab.
type api struct {
	t       *testing.T
	tl      *testLab
	session string
}

func (tl *testLab) login(t *testing.T) *api {
	t.Helper()
	a := &api{t: t, tl: tl}
	var session string
	req, _ := http.NewRequest(http.MethodPost, tl.server.URL+"/api/session", nil)
	req.SetBasicAuth("lab", "s3cret")
	res, err := tl.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&session) != nil || session == "" {
		t.Fatalf("login: %d", res.StatusCode)
	}
	a.session = session
	return a
}

// do sends a request and decodes the answer into out (when given); it returns the status code.
func (a *api) do(method, path string, body, out interface{}) int {
	a.t.Helper()
	var data bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&data).Encode(body)
	}
	req, _ := http.NewRequest(method, a.tl.server.URL+path, &data)
	req.Header.Set(vapi.SessionHeader, a.session)
	res, err := a.tl.server.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			a.t.Fatalf("%s %s: %d, %v", method, path, res.StatusCode, err)
		}
	}
	return res.StatusCode
}

// task starts a task and waits for it; it returns its final info.
func (a *api) task(method, path string, body interface{}) vapi.TaskInfo {
	a.t.Helper()
	var id string
	if code := a.do(method, path, body, &id); code != http.StatusAccepted {
		a.t.Fatalf("%s %s: %d", method, path, code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var info vapi.TaskInfo
		a.do(http.MethodGet, "/api/cis/tasks/"+id, nil, &info)
		if info.Status == "SUCCEEDED" || info.Status == "FAILED" {
			return info
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("task %s still %s", id, info.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeBundle(t *testing.T, components ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bundle.zip")
	if err := os.WriteFile(path, labtest.Bundle(t, components...), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

func errorText(info vapi.TaskInfo) string {
	if info.Error == nil {
		return ""
	}
	return info.Error.ErrorType + ": " + info.Error.Messages[0].DefaultMessage
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
	if code := a.do(http.MethodGet, "/api/esx/settings/no-such", nil, &e); code != http.StatusNotFound {
		t.Errorf("unknown route: %d", code)
	}
	if code := a.do(http.MethodPut, "/api/esx/settings/depots/offline", nil, &e); code != http.StatusMethodNotAllowed {
		t.Errorf("wrong method: %d", code)
	}
	var clusters []map[string]interface{}
	a.do(http.MethodGet, "/api/vcenter/cluster?names=gpu", nil, &clusters)
	if len(clusters) != 1 || clusters[0]["cluster"] != tl.clusters[0].Value {
		t.Errorf("clusters: %v", clusters)
	}
	var hosts []map[string]string
	a.do(http.MethodGet, "/api/vcenter/host?clusters="+tl.clusters[0].Value, nil, &hosts)
	if len(hosts) != 2 || hosts[0]["name"] != "esxi-01" || hosts[1]["connection_state"] != "CONNECTED" {
		t.Errorf("hosts: %v", hosts)
	}
	var stats stats.Snapshot
	tl.call(t, http.MethodGet, "/lab/stats", nil, &stats)
	if stats.RESTByRoute["GET /api/vcenter/host"] != 1 || stats.RESTByRoute["GET /api/vcenter/cluster"] != 1 {
		t.Errorf("REST requests are counted by their route template: %v", stats.RESTByRoute)
	}
}

func TestDepotImport(t *testing.T) {
	tl := startLab(t)
	a := tl.login(t)
	location := writeBundle(t, driver+"="+version, daemon+"=525.105.14-0.0.0000")
	info := a.task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": location})
	if info.Status != "SUCCEEDED" || info.Progress == nil || info.Progress.Completed != info.Progress.Total {
		t.Fatalf("import: %+v %s", info, errorText(info))
	}
	depot := info.Result.(map[string]interface{})["depot"].(string)
	if s := tl.state(t); len(s.Depots) != 1 || s.Depots[0].ID != depot || s.Depots[0].Location != location ||
		s.Depots[0].Components[driver] != version {
		t.Errorf("depots in /lab/state: %+v", s.Depots)
	}

	var e vapi.Err
	if code := a.do(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": location}, &e); code != http.StatusBadRequest ||
		e.ErrorType != "ALREADY_EXISTS" || e.Data.(map[string]interface{})["depot"] != depot {
		t.Errorf("the same location again: %d %+v", code, e)
	}
	again := a.task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true", map[string]string{
		"source_type": "PULL", "location": writeBundle(t, driver+"="+version, daemon+"=525.105.14-0.0.0000")})
	if again.Status != "FAILED" || again.Error.ErrorType != "ALREADY_EXISTS" {
		t.Errorf("the same content from elsewhere: %+v", again)
	}

	corrupt := filepath.Join(t.TempDir(), "corrupt.zip")
	_ = os.WriteFile(corrupt, []byte("PK\x03\x04garbage"), 0o600)
	for location, want := range map[string]string{
		"file://" + corrupt:                  "is not a valid offline bundle: it is not a zip archive",
		"file:///nonexistent/bundle.zip":     "Cannot download the offline bundle from file:///nonexistent/bundle.zip",
		"http://127.0.0.1:1/no-server/b.zip": "Cannot download the offline bundle",
	} {
		info := a.task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
			map[string]string{"source_type": "PULL", "location": location})
		if info.Status != "FAILED" || !strings.Contains(errorText(info), want) {
			t.Errorf("%s: %s, want %q", location, errorText(info), want)
		}
	}

	served := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(labtest.Bundle(t, "other=1.0"))
	}))
	defer served.Close()
	if info := a.task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": served.URL + "/other.zip"}); info.Status != "SUCCEEDED" {
		t.Errorf("import over http: %s", errorText(info))
	}

	var components []componentSummaryJSON
	a.do(http.MethodGet, "/api/esx/settings/depot-content/components?names="+driver+"&names=ESXi", nil, &components)
	if len(components) != 2 || components[0].Name != "ESXi" || components[1].Name != driver ||
		components[1].Versions[0].Version != version || components[1].Versions[0].Category != "BUGFIX" {
		t.Errorf("depot content: %+v", components)
	}
	var content struct {
		MetadataBundles map[string][]metadataInfoJSON `json:"metadata_bundles"`
	}
	a.do(http.MethodGet, "/api/esx/settings/depots/offline/"+depot+"/content", nil, &content)
	if m := content.MetadataBundles["NVIDIA"]; len(m) != 1 || len(m[0].IndependentComponents) != 2 {
		t.Errorf("depot content: %+v", content)
	}
	if info := a.task(http.MethodDelete, "/api/esx/settings/depots/offline/"+depot+"?vmw-task=true", nil); info.Status != "SUCCEEDED" {
		t.Errorf("delete: %s", errorText(info))
	}
	var depots map[string]depotSummaryJSON
	a.do(http.MethodGet, "/api/esx/settings/depots/offline", nil, &depots)
	if _, ok := depots[depot]; ok || len(depots) != 1 {
		t.Errorf("depots after delete: %v", depots)
	}
}

// imageWithDriver imports the driver bundle and commits it to the image of the test cluster.
func imageWithDriver(t *testing.T, tl *testLab, a *api) string {
	t.Helper()
	info := a.task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": writeBundle(t, driver+"="+version)})
	if info.Status != "SUCCEEDED" {
		t.Fatal(errorText(info))
	}
	base := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/software"
	var draft string
	if code := a.do(http.MethodPost, base+"/drafts", nil, &draft); code != http.StatusCreated {
		t.Fatalf("create draft: %d", code)
	}
	var e vapi.Err
	if code := a.do(http.MethodPost, base+"/drafts", nil, &e); code != http.StatusBadRequest || e.ErrorType != "ALREADY_EXISTS" {
		t.Errorf("second draft of the same user: %d %+v", code, e)
	}
	a.do(http.MethodPatch, base+"/drafts/"+draft+"/software/components",
		map[string]interface{}{"components_to_set": map[string]string{driver: "1.0"}}, nil)
	validated := a.task(http.MethodPost, base+"/drafts/"+draft+"?action=validate&vmw-task=true", nil)
	errors := validated.Result.(map[string]interface{})["notifications"].(map[string]interface{})["errors"].([]interface{})
	if len(errors) != 1 || !strings.Contains(errors[0].(map[string]interface{})["message"].(map[string]interface{})["default_message"].(string), "version 1.0 is not in any depot") {
		t.Errorf("validation of a version no depot holds: %v", validated.Result)
	}
	if info := a.task(http.MethodPost, base+"/drafts/"+draft+"?action=commit&vmw-task=true", map[string]string{}); info.Status != "FAILED" ||
		info.Error.ErrorType != "INVALID_ARGUMENT" {
		t.Errorf("commit of an invalid draft: %+v", info)
	}
	a.do(http.MethodPatch, base+"/drafts/"+draft+"/software/components",
		map[string]interface{}{"components_to_set": map[string]interface{}{driver: nil}}, nil)
	info = a.task(http.MethodPost, base+"/drafts/"+draft+"?action=commit&vmw-task=true", map[string]string{"message": "driver"})
	if info.Status != "SUCCEEDED" || info.Result != "2" {
		t.Fatalf("commit: %+v %s", info, errorText(info))
	}
	var software softwareInfoJSON
	a.do(http.MethodGet, base, nil, &software)
	if software.Components[driver].Version != version || software.BaseImage.Version != defaultBaseImage ||
		software.Components[driver].Details == nil {
		t.Errorf("software after commit: %+v", software)
	}
	return base
}

func TestImageAndRemediation(t *testing.T) {
	tl := startLab(t)
	tl.vlcm.remediationDelay = 0
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)

	scan := a.task(http.MethodPost, base+"?action=scan&vmw-task=true", nil)
	if got := scan.Result.(map[string]interface{}); got["status"] != "NON_COMPLIANT" || len(got["non_compliant_hosts"].([]interface{})) != 2 {
		t.Errorf("scan: %v", got)
	}
	if info := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{}); info.Status != "FAILED" ||
		!strings.Contains(errorText(info), "End User License Agreement") {
		t.Errorf("apply without the EULA: %s", errorText(info))
	}
	if s := tl.state(t); s.Hosts[0].Components[driver] != "" {
		t.Errorf("apply without the EULA installed something: %v", s.Hosts[0].Components)
	}
	info := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
	if info.Status != "SUCCEEDED" || info.Progress.Completed != 2 || info.Progress.Total != 2 {
		t.Fatalf("apply: %+v %s", info, errorText(info))
	}
	s := tl.state(t)
	for _, h := range s.Hosts[:2] {
		if h.Components[driver] != version || h.Components["ESXi"] != defaultBaseImage || h.MaintenanceMode {
			t.Errorf("host %s after remediation: %+v", h.Name, h)
		}
	}
	if s.Hosts[2].Components[driver] != "" || s.Clusters[0].Image[driver] != version || !s.Clusters[0].ImageManaged {
		t.Errorf("standalone host or cluster image: %+v %+v", s.Hosts[2], s.Clusters[0])
	}
	var compliance clusterCompliance
	a.do(http.MethodGet, base+"/compliance", nil, &compliance)
	if compliance.Status != "COMPLIANT" || len(compliance.CompliantHosts) != 2 {
		t.Errorf("compliance after apply: %+v", compliance)
	}
	var e vapi.Err
	if code := a.do(http.MethodDelete, "/api/esx/settings/depots/offline/offline-depot-1?vmw-task=true", nil, &e); code != http.StatusBadRequest ||
		e.ErrorType != "RESOURCE_IN_USE" {
		t.Errorf("deleting the depot the image needs: %d %+v", code, e)
	}
}

// A powered-on vGPU VM without vGPU vMotion keeps its host from entering maintenance mode: the check says so,
// and remediation fails on that host and skips the rest.
func TestRemediationFailsOnHostThatCannotEvacuate(t *testing.T) {
	tl := startLab(t)
	tl.vlcm.remediationDelay = 0
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tl.runVGPU(t, ctx, c)
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)

	check := a.task(http.MethodPost, base+"?action=check&vmw-task=true", map[string]interface{}{})
	result := check.Result.(map[string]interface{})
	if result["status"] != "ERROR" || !strings.Contains(mustJSON(t, result), "vgpu.hotmigrate.enabled is false") {
		t.Errorf("check: %s", mustJSON(t, result))
	}
	info := a.task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
	if info.Status != "FAILED" || !strings.Contains(errorText(info), "Host esxi-01 cannot enter maintenance mode") ||
		!strings.Contains(errorText(info), "vm-1") {
		t.Fatalf("apply: %s", errorText(info))
	}
	data := info.Error.Data.(map[string]interface{})
	if failed, skipped := data["failed_hosts"].([]interface{}), data["skipped_hosts"].([]interface{}); len(failed) != 1 ||
		failed[0] != tl.hosts[0].ref.Value || len(skipped) != 1 || skipped[0] != tl.hosts[1].ref.Value {
		t.Errorf("apply result: %s", mustJSON(t, data))
	}
	s := tl.state(t)
	if s.Hosts[0].Components[driver] != "" || s.Hosts[1].Components[driver] != "" || s.Hosts[0].MaintenanceMode {
		t.Errorf("no host may change: %+v %+v", s.Hosts[0], s.Hosts[1])
	}
	var last applyResult
	if code := a.do(http.MethodGet, base+"/reports/last-apply-result", nil, &last); code != http.StatusOK ||
		last.Status.Status != "ERROR" || last.HostStatus[tl.hosts[0].ref.Value].Status != "ERROR" {
		t.Errorf("last apply result: %d %+v", code, last)
	}
}

func TestClusterWithoutImageManagement(t *testing.T) {
	topo, err := labtest.Topology(t, `{"datacenters": [{"name": "dc", "clusters": [{"name": "legacy", "image_managed": false,
		"hosts": [{"name": "h1", "components": {"ESXi": "7.0.3-0.95.22348816", "NVD-VGPU-702": "525.105.14"}}]}]}],
		"vlcm": {"remediation_delay_ms": 5}}`)
	if err != nil {
		t.Fatal(err)
	}
	l, svc, err := NewSimulator(labtest.Catalog(t), topo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewTLSServer(l.Handler(svc))
	defer server.Close()
	svc.Listen = &url.URL{User: url.UserPassword("lab", "s3cret")}
	s := l.state()
	if s.Clusters[0].ImageManaged || s.Clusters[0].Image != nil || s.Hosts[0].Components["NVD-VGPU-702"] != "525.105.14" ||
		l.vlcm.remediationDelay != 5*time.Millisecond {
		t.Errorf("state: %+v %+v", s.Clusters[0], s.Hosts[0])
	}
	a := (&testLab{Lab: l, server: server}).login(t)
	base := "/api/esx/settings/clusters/" + l.clusters[0].Value
	var enablement map[string]bool
	a.do(http.MethodGet, base+"/enablement/software", nil, &enablement)
	var e vapi.Err
	if code := a.do(http.MethodPost, base+"/software/drafts", nil, &e); enablement["enabled"] || code != http.StatusNotFound ||
		!strings.Contains(e.Error(), "not managed with a single image") {
		t.Errorf("drafts of a cluster without image management: %v %d %+v", enablement, code, e)
	}
	if info := a.task(http.MethodPut, base+"/enablement/software?vmw-task=true", map[string]bool{"skip_software_check": false}); info.Status != "SUCCEEDED" {
		t.Fatalf("enable: %s", errorText(info))
	}
	var software softwareInfoJSON
	if code := a.do(http.MethodGet, base+"/software", nil, &software); code != http.StatusOK ||
		software.BaseImage.Version != "7.0.3-0.95.22348816" || len(software.Components) != 0 {
		t.Errorf("image after enabling: %d %+v", code, software)
	}
	if _, err := labtest.Topology(t, `{"datacenters": [{"name": "dc"}], "vlcm": {"delay": 1}}`); err == nil ||
		!strings.Contains(err.Error(), "vlcm") {
		t.Errorf("unknown vlcm key: %v", err)
	}
}

func mustJSON(t *testing.T, v interface{}) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{"525.85.07-1OEM.800.1.0.20613240", "525.105.14-1OEM.800.1.0.20613240",
		"525.105.14-1OEM.800.1.0.20613241", "535.54.06-1OEM.800.1.0.20613240", "535.54.06a"}
	for i := 0; i+1 < len(ordered); i++ {
		if compareVersions(ordered[i], ordered[i+1]) >= 0 || compareVersions(ordered[i+1], ordered[i]) <= 0 {
			t.Errorf("%s should sort before %s", ordered[i], ordered[i+1])
		}
	}
	if compareVersions("8.0.2-0.0.22380479", "8.0.2-0.0.22380479") != 0 {
		t.Error("equal versions")
	}
}
