package vapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func newTestRouter() *Router {
	rt := NewRouter(func() (string, string) { return "lab", "s3cret" })
	rt.Add(http.MethodGet, "/api/things/{thing}", func(c *Call) {
		if c.Params["thing"] == "missing" {
			c.Fail(NotFound("Thing", "missing"))
			return
		}
		c.W.WriteHeader(http.StatusNoContent)
	})
	rt.Register("com.vmware.lab.thing.get", func(c *Invocation) (interface{}, *Err) {
		id, err := c.Str("thing")
		if err != nil {
			return nil, err
		}
		return NewStruct("com.vmware.lab.thing.info", map[string]interface{}{"id": id, "note": OptionalString("")}), nil
	})
	return rt
}

func serve(rt *Router, method, path, session string, body interface{}) *httptest.ResponseRecorder {
	data, _ := json.Marshal(body)
	r := httptest.NewRequest(method, path, bytes.NewReader(data))
	if session != "" {
		r.Header.Set(SessionHeader, session)
	}
	if path == "/api/session" && method == http.MethodPost {
		r.SetBasicAuth("lab", "s3cret")
	}
	w := httptest.NewRecorder()
	rt.ServeHTTP(w, r)
	return w
}

func TestRESTSessionsAndRoutes(t *testing.T) {
	rt := newTestRouter()
	if w := serve(rt, http.MethodGet, "/api/things/a", "", nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("without a session: %d", w.Code)
	}
	var session string
	if w := serve(rt, http.MethodPost, "/api/session", "", nil); w.Code != http.StatusCreated ||
		json.Unmarshal(w.Body.Bytes(), &session) != nil || session == "" {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	if w := serve(rt, http.MethodGet, "/api/things/a", session, nil); w.Code != http.StatusNoContent {
		t.Errorf("with a session: %d", w.Code)
	}
	var e Err
	if w := serve(rt, http.MethodGet, "/api/things/missing", session, nil); w.Code != http.StatusNotFound ||
		json.Unmarshal(w.Body.Bytes(), &e) != nil || e.ErrorType != "NOT_FOUND" {
		t.Errorf("missing thing: %d %s", w.Code, w.Body)
	}
	if w := serve(rt, http.MethodPost, "/api/things/a", session, nil); w.Code != http.StatusMethodNotAllowed ||
		w.Header().Get("Allow") != "GET" {
		t.Errorf("wrong method: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if got := rt.Route(httptest.NewRequest(http.MethodGet, "/api/things/b", nil)); got != "/api/things/{thing}" {
		t.Errorf("route named %q", got)
	}
	if w := serve(rt, http.MethodDelete, "/api/session", session, nil); w.Code != http.StatusNoContent {
		t.Errorf("logout: %d", w.Code)
	}
	if w := serve(rt, http.MethodGet, "/api/session", session, nil); w.Code != http.StatusUnauthorized {
		t.Errorf("ended session still valid: %d", w.Code)
	}
}

func rpc(rt *Router, body interface{}) map[string]interface{} {
	w := serve(rt, http.MethodPost, "/api", "", body)
	var out map[string]interface{}
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return out
}

func invoke(service, operation string, input, security map[string]interface{}) map[string]interface{} {
	return map[string]interface{}{"jsonrpc": "2.0", "method": "invoke", "id": 7, "params": map[string]interface{}{
		"serviceId": service, "operationId": operation,
		"input": map[string]interface{}{"STRUCTURE": map[string]interface{}{"operation-input": input}},
		"ctx":   map[string]interface{}{"securityCtx": security}}}
}

func TestJSONRPC(t *testing.T) {
	rt := newTestRouter()
	login := rpc(rt, invoke("com.vmware.cis.session", "create", map[string]interface{}{},
		map[string]interface{}{"schemeId": SchemeUserPassword, "userName": "lab", "password": "s3cret"}))
	secret, _ := login["result"].(map[string]interface{})["output"].(map[string]interface{})["SECRET"].(string)
	if secret == "" || login["id"] != float64(7) {
		t.Fatalf("session.create: %v", login)
	}
	session := map[string]interface{}{"schemeId": SchemeSession, "sessionId": secret}
	out := rpc(rt, invoke("com.vmware.lab.thing", "get", map[string]interface{}{"thing": "a"}, session))
	info, ok := StructFields(out["result"].(map[string]interface{})["output"])
	if note, set := Unwrap(info["note"]); !ok || info["id"] != "a" || set || note != nil {
		t.Errorf("thing.get: %v", out)
	}
	failed := rpc(rt, invoke("com.vmware.lab.thing", "get", map[string]interface{}{}, session))
	errValue, _ := failed["result"].(map[string]interface{})["error"].(map[string]interface{})["ERROR"].(map[string]interface{})
	if _, ok := errValue["com.vmware.vapi.std.errors.invalid_argument"]; !ok {
		t.Errorf("thing.get without its input: %v", failed)
	}
	if out := rpc(rt, invoke("com.vmware.lab.thing", "get", map[string]interface{}{"thing": "a"}, nil)); out["error"] != nil ||
		out["result"].(map[string]interface{})["error"] == nil {
		t.Errorf("an operation without a session ran: %v", out)
	}
	if e, _ := rpc(rt, "not json-rpc")["error"].(map[string]interface{}); e["code"] != float64(RPCInvalidRequest) &&
		e["code"] != float64(RPCParseError) {
		t.Errorf("garbage answered %v", e)
	}
}

func TestTasks(t *testing.T) {
	var mu sync.Mutex
	var background sync.WaitGroup
	tasks := NewTasks(&mu, &background)
	rt := NewRouter(func() (string, string) { return "lab", "s3cret" })
	rt.Add(http.MethodGet, "/api/cis/tasks/{task}", tasks.Serve)
	release := make(chan struct{})
	start := func(fail bool) string {
		w := httptest.NewRecorder()
		mu.Lock()
		defer mu.Unlock()
		tasks.Start(&Call{W: w, User: "lab"}, "com.vmware.lab.things", "make", map[string]string{"thing": "a"},
			func(task *Task) (interface{}, *Err) {
				tasks.SetProgress(task, 1, 2, "half made")
				<-release
				if fail {
					return nil, NewErr("ERROR", "no thing")
				}
				return "a", nil
			})
		var id string
		if w.Code != http.StatusAccepted || json.Unmarshal(w.Body.Bytes(), &id) != nil {
			t.Fatalf("start: %d %s", w.Code, w.Body)
		}
		return id
	}
	made, failed := start(false), start(true)
	var session string
	_ = json.Unmarshal(serve(rt, http.MethodPost, "/api/session", "", nil).Body.Bytes(), &session)
	info := func(id string) TaskInfo {
		var i TaskInfo
		w := serve(rt, http.MethodGet, "/api/cis/tasks/"+id, session, nil)
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &i) != nil {
			t.Fatalf("task %s: %d %s", id, w.Code, w.Body)
		}
		return i
	}
	close(release)
	background.Wait()
	if i := info(made); i.Status != "SUCCEEDED" || i.Result != "a" || i.User != "lab" || i.Progress.Completed != 2 ||
		i.Target["thing"] != "a" {
		t.Errorf("succeeded task: %+v", i)
	}
	if i := info(failed); i.Status != "FAILED" || i.Error == nil || i.Error.Error() != "no thing" ||
		i.Progress.Completed != 1 {
		t.Errorf("failed task: %+v", i)
	}
	if w := serve(rt, http.MethodGet, "/api/cis/tasks/nothing", session, nil); w.Code != http.StatusNotFound {
		t.Errorf("unknown task: %d", w.Code)
	}
}

func TestTaskList(t *testing.T) {
	var mu sync.Mutex
	var background sync.WaitGroup
	tasks := NewTasks(&mu, &background)
	rt := NewRouter(func() (string, string) { return "lab", "s3cret" })
	rt.Add(http.MethodPost, "/api/cis/tasks?action=list", tasks.List)
	release := make(chan struct{})
	start := func(service, operation, target string) string {
		w := httptest.NewRecorder()
		mu.Lock()
		defer mu.Unlock()
		tasks.Start(&Call{W: w, User: "lab"}, service, operation, map[string]string{"type": "Thing", "id": target},
			func(task *Task) (interface{}, *Err) {
				if operation == "wait" {
					<-release
				}
				return nil, nil
			})
		var id string
		_ = json.Unmarshal(w.Body.Bytes(), &id)
		return id
	}
	waiting := start("com.vmware.lab.things", "wait", "a")
	start("com.vmware.lab.things", "make", "a")
	start("com.vmware.lab.others", "wait", "a")
	other := start("com.vmware.lab.things", "wait", "b")
	defer func() { close(release); background.Wait() }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		running := tasks.byID[waiting].Status == "RUNNING" && tasks.byID[other].Status == "RUNNING"
		mu.Unlock()
		if running || time.Now().After(deadline) {
			break
		}
	}
	var session string
	_ = json.Unmarshal(serve(rt, http.MethodPost, "/api/session", "", nil).Body.Bytes(), &session)
	list := func(filter map[string]interface{}) (int, map[string]TaskInfo) {
		found := map[string]TaskInfo{}
		w := serve(rt, http.MethodPost, "/api/cis/tasks?action=list", session, map[string]interface{}{"filter_spec": filter})
		_ = json.Unmarshal(w.Body.Bytes(), &found)
		return w.Code, found
	}
	code, found := list(map[string]interface{}{"services": []string{"com.vmware.lab.things"}, "status": []string{"RUNNING"},
		"targets": []map[string]string{{"type": "Thing", "id": "a"}}})
	if code != http.StatusOK || len(found) != 1 || found[waiting].Operation != "wait" || found[waiting].User != "lab" {
		t.Fatalf("the running task of things on a: %d %+v", code, found)
	}
	if _, found := list(map[string]interface{}{"services": []string{"com.vmware.lab.things"}}); len(found) != 3 {
		t.Fatalf("every task of things: %+v", found)
	}
	if _, found := list(map[string]interface{}{"tasks": []string{other}, "users": []string{"someone"}}); len(found) != 0 {
		t.Fatalf("another user's: %+v", found)
	}
	if code, _ := list(map[string]interface{}{"status": []string{"RUNNING"}}); code != http.StatusBadRequest {
		t.Fatalf("a filter without tasks or services: %d", code)
	}
}
