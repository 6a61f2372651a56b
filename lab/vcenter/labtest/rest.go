package labtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vcsim/vapi"
)

// API is a logged-in REST session (/api) on a test server.
type API struct {
	t       *testing.T
	server  *httptest.Server
	Session string // the session id (vmware-api-session-id)
}

// Login opens a REST session with the test labs' credentials (lab / s3cret).
func Login(t *testing.T, server *httptest.Server) *API {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, server.URL+"/api/session", nil)
	req.SetBasicAuth("lab", "s3cret")
	res, err := server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var session string
	if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&session) != nil || session == "" {
		t.Fatalf("login: %d", res.StatusCode)
	}
	return &API{t: t, server: server, Session: session}
}

// Do sends a request and decodes the answer into out (when given); it returns the status code.
func (a *API) Do(method, path string, body, out interface{}) int {
	a.t.Helper()
	var data bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&data).Encode(body)
	}
	req, _ := http.NewRequest(method, a.server.URL+path, &data)
	req.Header.Set(vapi.SessionHeader, a.Session)
	res, err := a.server.Client().Do(req)
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

// Task starts a task and waits for it; it returns its final info.
func (a *API) Task(method, path string, body interface{}) vapi.TaskInfo {
	a.t.Helper()
	var id string
	if code := a.Do(method, path, body, &id); code != http.StatusAccepted {
		a.t.Fatalf("%s %s: %d", method, path, code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var info vapi.TaskInfo
		a.Do(http.MethodGet, "/api/cis/tasks/"+id, nil, &info)
		if info.Status == "SUCCEEDED" || info.Status == "FAILED" {
			return info
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("task %s still %s", id, info.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ErrorText is a failed task's error type and first message ("" when it did not fail).
func ErrorText(info vapi.TaskInfo) string {
	if info.Error == nil {
		return ""
	}
	return info.Error.ErrorType + ": " + info.Error.Messages[0].DefaultMessage
}

// BundleURL writes an offline bundle of the given components (name=version) and answers its file URL.
func BundleURL(t *testing.T, components ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bundle.zip")
	if err := os.WriteFile(path, Bundle(t, components...), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

// JSON is v as JSON, for test messages.
func JSON(t *testing.T, v interface{}) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// CommitImage imports an offline bundle of the given components (name=version) and commits them to the desired
// image of the cluster through a draft; it answers the path of the cluster's software.
func (a *API) CommitImage(cluster string, components ...string) string {
	a.t.Helper()
	if info := a.Task(http.MethodPost, "/api/esx/settings/depots/offline?vmw-task=true", map[string]string{
		"source_type": "PULL", "location": BundleURL(a.t, components...)}); info.Status != "SUCCEEDED" {
		a.t.Fatal(ErrorText(info))
	}
	base := "/api/esx/settings/clusters/" + cluster + "/software"
	var draft string
	if code := a.Do(http.MethodPost, base+"/drafts", nil, &draft); code != http.StatusCreated {
		a.t.Fatalf("create draft: %d", code)
	}
	set := map[string]string{}
	for _, c := range components {
		parts := strings.SplitN(c, "=", 2)
		set[parts[0]] = parts[1]
	}
	a.Do(http.MethodPatch, base+"/drafts/"+draft+"/software/components",
		map[string]interface{}{"components_to_set": set}, nil)
	if info := a.Task(http.MethodPost, base+"/drafts/"+draft+"?action=commit&vmw-task=true",
		map[string]string{"message": "driver"}); info.Status != "SUCCEEDED" {
		a.t.Fatalf("commit: %s", ErrorText(info))
	}
	return base
}
