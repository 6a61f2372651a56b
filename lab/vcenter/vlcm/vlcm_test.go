package vlcm

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vcsim/labtest"
	"vcsim/vapi"
)

const (
	driver  = "NVD-VGPU-800"
	version = "525.105.14-1OEM.800.1.0.20613240"
	daemon  = "nvd-gpu-mgmt-daemon"
)

func TestDepotImport(t *testing.T) {
	tl := startLab(t)
	a := tl.login()
	location := labtest.BundleURL(t, driver+"="+version, daemon+"=525.105.14-0.0.0000")
	info := a.Task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": location})
	if info.Status != "SUCCEEDED" || info.Progress == nil || info.Progress.Completed != info.Progress.Total {
		t.Fatalf("import: %+v %s", info, labtest.ErrorText(info))
	}
	depot := info.Result.(map[string]interface{})["depot"].(string)
	tl.mu.Lock()
	depots := tl.vlcm.Depots()
	tl.mu.Unlock()
	if len(depots) != 1 || depots[0].ID != depot || depots[0].Location != location || depots[0].Components[driver] != version {
		t.Errorf("depots in /lab/state: %+v", depots)
	}

	var e vapi.Err
	if code := a.Do(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": location}, &e); code != http.StatusBadRequest ||
		e.ErrorType != "ALREADY_EXISTS" || e.Data.(map[string]interface{})["depot"] != depot {
		t.Errorf("the same location again: %d %+v", code, e)
	}
	again := a.Task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true", map[string]string{
		"source_type": "PULL", "location": labtest.BundleURL(t, driver+"="+version, daemon+"=525.105.14-0.0.0000")})
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
		info := a.Task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
			map[string]string{"source_type": "PULL", "location": location})
		if info.Status != "FAILED" || !strings.Contains(labtest.ErrorText(info), want) {
			t.Errorf("%s: %s, want %q", location, labtest.ErrorText(info), want)
		}
	}

	served := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(labtest.Bundle(t, "other=1.0"))
	}))
	defer served.Close()
	if info := a.Task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": served.URL + "/other.zip"}); info.Status != "SUCCEEDED" {
		t.Errorf("import over http: %s", labtest.ErrorText(info))
	}

	var components []componentSummaryJSON
	a.Do(http.MethodGet, "/api/esx/settings/depot-content/components?names="+driver+"&names=ESXi", nil, &components)
	if len(components) != 2 || components[0].Name != "ESXi" || components[1].Name != driver ||
		components[1].Versions[0].Version != version || components[1].Versions[0].Category != "BUGFIX" {
		t.Errorf("depot content: %+v", components)
	}
	var content struct {
		MetadataBundles map[string][]metadataInfoJSON `json:"metadata_bundles"`
	}
	a.Do(http.MethodGet, "/api/esx/settings/depots/offline/"+depot+"/content", nil, &content)
	if m := content.MetadataBundles["NVIDIA"]; len(m) != 1 || len(m[0].IndependentComponents) != 2 {
		t.Errorf("depot content: %+v", content)
	}
	if info := a.Task(http.MethodDelete, "/api/esx/settings/depots/offline/"+depot+"?vmw-task=true", nil); info.Status != "SUCCEEDED" {
		t.Errorf("delete: %s", labtest.ErrorText(info))
	}
	var listed map[string]depotSummaryJSON
	a.Do(http.MethodGet, "/api/esx/settings/depots/offline", nil, &listed)
	if _, ok := listed[depot]; ok || len(listed) != 1 {
		t.Errorf("depots after delete: %v", listed)
	}
}

// A draft is validated and committed: a version no depot holds fails both, a component set without a version gets
// the newest the depots hold.
func TestDrafts(t *testing.T) {
	tl := startLab(t)
	a := tl.login()
	info := a.Task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true",
		map[string]string{"source_type": "PULL", "location": labtest.BundleURL(t, driver+"="+version)})
	if info.Status != "SUCCEEDED" {
		t.Fatal(labtest.ErrorText(info))
	}
	base := "/api/esx/settings/clusters/" + tl.clusters[0].Value + "/software"
	var draft string
	if code := a.Do(http.MethodPost, base+"/drafts", nil, &draft); code != http.StatusCreated {
		t.Fatalf("create draft: %d", code)
	}
	var e vapi.Err
	if code := a.Do(http.MethodPost, base+"/drafts", nil, &e); code != http.StatusBadRequest || e.ErrorType != "ALREADY_EXISTS" {
		t.Errorf("second draft of the same user: %d %+v", code, e)
	}
	a.Do(http.MethodPatch, base+"/drafts/"+draft+"/software/components",
		map[string]interface{}{"components_to_set": map[string]string{driver: "1.0"}}, nil)
	validated := a.Task(http.MethodPost, base+"/drafts/"+draft+"?action=validate&vmw-task=true", nil)
	errors := validated.Result.(map[string]interface{})["notifications"].(map[string]interface{})["errors"].([]interface{})
	if len(errors) != 1 || !strings.Contains(errors[0].(map[string]interface{})["message"].(map[string]interface{})["default_message"].(string), "version 1.0 is not in any depot") {
		t.Errorf("validation of a version no depot holds: %v", validated.Result)
	}
	if info := a.Task(http.MethodPost, base+"/drafts/"+draft+"?action=commit&vmw-task=true", map[string]string{}); info.Status != "FAILED" ||
		info.Error.ErrorType != "INVALID_ARGUMENT" {
		t.Errorf("commit of an invalid draft: %+v", info)
	}
	a.Do(http.MethodPatch, base+"/drafts/"+draft+"/software/components",
		map[string]interface{}{"components_to_set": map[string]interface{}{driver: nil}}, nil)
	info = a.Task(http.MethodPost, base+"/drafts/"+draft+"?action=commit&vmw-task=true", map[string]string{"message": "driver"})
	if info.Status != "SUCCEEDED" || info.Result != "2" {
		t.Fatalf("commit: %+v %s", info, labtest.ErrorText(info))
	}
	var software softwareInfoJSON
	a.Do(http.MethodGet, base, nil, &software)
	if software.Components[driver].Version != version || software.BaseImage.Version != defaultBaseImage ||
		software.Components[driver].Details == nil {
		t.Errorf("software after commit: %+v", software)
	}
}

func TestImageAndRemediation(t *testing.T) {
	tl := startLab(t)
	a := tl.login()
	base := a.CommitImage(tl.clusters[0].Value, driver+"="+version)

	scan := a.Task(http.MethodPost, base+"?action=scan&vmw-task=true", nil)
	if got := scan.Result.(map[string]interface{}); got["status"] != "NON_COMPLIANT" || len(got["non_compliant_hosts"].([]interface{})) != 2 {
		t.Errorf("scan: %v", got)
	}
	if info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{}); info.Status != "FAILED" ||
		!strings.Contains(labtest.ErrorText(info), "End User License Agreement") {
		t.Errorf("apply without the EULA: %s", labtest.ErrorText(info))
	}
	if installed := tl.installed(0); installed[driver] != "" {
		t.Errorf("apply without the EULA installed something: %v", installed)
	}
	info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true})
	if info.Status != "SUCCEEDED" || info.Progress.Completed != 2 || info.Progress.Total != 2 {
		t.Fatalf("apply: %+v %s", info, labtest.ErrorText(info))
	}
	for i := range tl.hosts[:2] {
		if installed := tl.installed(i); installed[driver] != version || installed["ESXi"] != defaultBaseImage || tl.inMaintenance(i) {
			t.Errorf("host %s after remediation: %v", tl.hosts[i].Name, installed)
		}
	}
	if cluster := tl.cluster(); tl.installed(2)[driver] != "" || cluster.Image[driver] != version || !cluster.Managed {
		t.Errorf("standalone host or cluster image: %v %+v", tl.installed(2), cluster)
	}
	if want := []string{"DC0_C0_H0 " + version, "DC0_C0_H1 " + version}; strings.Join(tl.images, "|") != strings.Join(want, "|") {
		t.Errorf("host images recorded: %q, want %q", tl.images, want)
	}
	var compliance clusterCompliance
	a.Do(http.MethodGet, base+"/compliance", nil, &compliance)
	if compliance.Status != "COMPLIANT" || len(compliance.CompliantHosts) != 2 {
		t.Errorf("compliance after apply: %+v", compliance)
	}
	var e vapi.Err
	if code := a.Do(http.MethodDelete, "/api/esx/settings/depots/offline/offline-depot-1?vmw-task=true", nil, &e); code != http.StatusBadRequest ||
		e.ErrorType != "RESOURCE_IN_USE" {
		t.Errorf("deleting the depot the image needs: %d %+v", code, e)
	}
}

func TestClusterWithoutImageManagement(t *testing.T) {
	tl := startLabWith(t, `{"datacenters": [{"name": "DC0", "clusters": [{"name": "DC0_C0", "image_managed": false,
		"hosts": [{"name": "DC0_C0_H0", "components": {"ESXi": "7.0.3-0.95.22348816", "NVD-VGPU-702": "525.105.14"}}]}]}],
		"vlcm": {"remediation_delay_ms": 5}}`)
	if cluster := tl.cluster(); cluster.Managed || cluster.Image != nil || tl.installed(0)["NVD-VGPU-702"] != "525.105.14" ||
		tl.vlcm.remediationDelay != 5*time.Millisecond {
		t.Errorf("state: %+v %v", cluster, tl.installed(0))
	}
	a := tl.login()
	base := "/api/esx/settings/clusters/" + tl.clusters[0].Value
	var enablement map[string]bool
	a.Do(http.MethodGet, base+"/enablement/software", nil, &enablement)
	var e vapi.Err
	if code := a.Do(http.MethodPost, base+"/software/drafts", nil, &e); enablement["enabled"] || code != http.StatusNotFound ||
		!strings.Contains(e.Error(), "not managed with a single image") {
		t.Errorf("drafts of a cluster without image management: %v %d %+v", enablement, code, e)
	}
	if info := a.Task(http.MethodPut, base+"/enablement/software?vmw-task=true", map[string]bool{"skip_software_check": false}); info.Status != "SUCCEEDED" {
		t.Fatalf("enable: %s", labtest.ErrorText(info))
	}
	var software softwareInfoJSON
	if code := a.Do(http.MethodGet, base+"/software", nil, &software); code != http.StatusOK ||
		software.BaseImage.Version != "7.0.3-0.95.22348816" || len(software.Components) != 0 {
		t.Errorf("image after enabling: %d %+v", code, software)
	}
	if _, err := labtest.Topology(t, `{"datacenters": [{"name": "dc"}], "vlcm": {"delay": 1}}`); err == nil ||
		!strings.Contains(err.Error(), "vlcm") {
		t.Errorf("unknown vlcm key: %v", err)
	}
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
