package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/jsonhttp"
)

// The vSphere Automation REST API under /api: session login, CIS tasks and the vLCM subset (vlcm_*.go).

const sessionHeader = "vmware-api-session-id"

// restRoute is one operation, written as VMware's OpenAPI description writes its path: a template with {names} and,
// for task operations, the fixed query parameters (/api/esx/settings/depots/offline?vmw-task=true).
type restRoute struct {
	method   string
	pattern  string
	segments []string
	query    url.Values
	public   bool // served without a session (login)
	handle   func(*restCall)
}

// restCall is a matched request: path parameters, the session's user, the response writer.
type restCall struct {
	w      http.ResponseWriter
	r      *http.Request
	params map[string]string
	user   string
	lab    *Lab
}

// restRouter serves /api. Its Route method names the matched template, which the request counters use.
type restRouter struct {
	lab    *Lab
	routes []*restRoute

	// credentials returns the user and password SessionManager.Login accepts.
	credentials func() (string, string)

	mu       sync.Mutex
	sessions map[string]*apiSession // session id -> session, shared by REST and JSON-RPC (vapi.go)
}

// apiSession is one vAPI session: com.vmware.cis.session's Info (user, created_time, last_accessed_time).
type apiSession struct {
	user         string
	created      time.Time
	lastAccessed time.Time
}

func newRestRouter(l *Lab) *restRouter {
	return &restRouter{lab: l, sessions: map[string]*apiSession{}}
}

func (rt *restRouter) add(method, pattern string, handle func(*restCall)) *restRoute {
	path, query := pattern, ""
	if i := strings.Index(pattern, "?"); i >= 0 {
		path, query = pattern[:i], pattern[i+1:]
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		panic(fmt.Sprintf("route %s: %v", pattern, err))
	}
	route := &restRoute{method: method, pattern: pattern, segments: strings.Split(strings.Trim(path, "/"), "/"),
		query: values, handle: handle}
	rt.routes = append(rt.routes, route)
	return route
}

// match finds the route for a request: the path must fit the template and every fixed query parameter must be
// present; among several, the one with more fixed query parameters wins (…/software?action=apply over …/software).
// allowed lists the methods of routes whose path fits, for 405 answers.
func (rt *restRouter) match(r *http.Request) (route *restRoute, params map[string]string, allowed []string) {
	segments := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	query := r.URL.Query()
	for _, candidate := range rt.routes {
		p, ok := candidate.fits(segments)
		if !ok || !candidate.queryFits(query) {
			continue
		}
		if candidate.method != r.Method {
			allowed = append(allowed, candidate.method)
			continue
		}
		if route == nil || len(candidate.query) > len(route.query) {
			route, params = candidate, p
		}
	}
	return route, params, allowed
}

func (route *restRoute) fits(segments []string) (map[string]string, bool) {
	if len(segments) != len(route.segments) {
		return nil, false
	}
	params := map[string]string{}
	for i, s := range route.segments {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			value, err := url.PathUnescape(segments[i])
			if err != nil || value == "" {
				return nil, false
			}
			params[s[1:len(s)-1]] = value
		} else if s != segments[i] {
			return nil, false
		}
	}
	return params, true
}

func (route *restRoute) queryFits(query url.Values) bool {
	for key, want := range route.query {
		if query.Get(key) != want[0] {
			return false
		}
	}
	return true
}

// Route names the template that serves r, for the request counters (GET /lab/stats).
func (rt *restRouter) Route(r *http.Request) string {
	if route, _, _ := rt.match(r); route != nil {
		return route.pattern
	}
	return r.URL.Path
}

func (rt *restRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params, allowed := rt.match(r)
	if route == nil {
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			vapiError(w, http.StatusMethodNotAllowed, "OPERATION_NOT_FOUND",
				"%s %s is not an operation of this API (allowed: %s).", r.Method, r.URL.Path, strings.Join(allowed, ", "))
			return
		}
		vapiError(w, http.StatusNotFound, "NOT_FOUND", "No operation at %s %s in the lab vCenter's REST API.",
			r.Method, r.URL.RequestURI())
		return
	}
	call := &restCall{w: w, r: r, params: params, lab: rt.lab}
	if !route.public {
		user, ok := rt.user(r.Header.Get(sessionHeader))
		if !ok {
			vapiError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Authentication required.")
			return
		}
		call.user = user
	}
	route.handle(call)
}

func (rt *restRouter) user(session string) (string, bool) {
	s := rt.session(session)
	if s == nil {
		return "", false
	}
	return s.user, true
}

// session returns a copy of a live session, marking it accessed now, or nil.
func (rt *restRouter) session(id string) *apiSession {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	s := rt.sessions[id]
	if s == nil || id == "" {
		return nil
	}
	s.lastAccessed = time.Now()
	copied := *s
	return &copied
}

// validCredentials tells whether user and password are those SessionManager.Login accepts.
func (rt *restRouter) validCredentials(user, password string) bool {
	wantUser, wantPassword := rt.credentials()
	return wantUser != "" && subtle.ConstantTimeCompare([]byte(user), []byte(wantUser)) == 1 &&
		subtle.ConstantTimeCompare([]byte(password), []byte(wantPassword)) == 1
}

// newSession opens a session for user and returns its id.
func (rt *restRouter) newSession(user string) string {
	id := randomHex(16)
	now := time.Now()
	rt.mu.Lock()
	rt.sessions[id] = &apiSession{user: user, created: now, lastAccessed: now}
	rt.mu.Unlock()
	return id
}

func (rt *restRouter) endSession(id string) {
	rt.mu.Lock()
	delete(rt.sessions, id)
	rt.mu.Unlock()
}

// registerREST adds the REST API to the lab's server. The credentials are those SessionManager.Login accepts.
func (l *Lab) registerREST(svc *simulator.Service) {
	rt := newRestRouter(l)
	rt.credentials = func() (string, string) {
		if svc.Listen == nil || svc.Listen.User == nil {
			return "", ""
		}
		password, _ := svc.Listen.User.Password()
		return svc.Listen.User.Username(), password
	}
	rt.add(http.MethodPost, "/api/session", rt.login).public = true
	rt.add(http.MethodDelete, "/api/session", rt.logout)
	rt.add(http.MethodGet, "/api/session", func(c *restCall) {
		s := rt.session(c.r.Header.Get(sessionHeader))
		if s == nil { // ended since the router checked it
			vapiError(c.w, http.StatusUnauthorized, "UNAUTHENTICATED", "Authentication required.")
			return
		}
		jsonhttp.Write(c.w, http.StatusOK, map[string]string{"user": s.user, "created_time": vapiTime(s.created),
			"last_accessed_time": vapiTime(s.lastAccessed)})
	})
	rt.add(http.MethodPost, "/api", rt.invoke).public = true // JSON-RPC, authenticated per call (vapi.go)
	rt.add(http.MethodGet, "/api/cis/tasks/{task}", l.getTask)
	rt.add(http.MethodGet, "/api/vcenter/datacenter", l.listDatacenters)
	rt.add(http.MethodGet, "/api/vcenter/cluster", l.listClusters)
	rt.add(http.MethodGet, "/api/vcenter/host", l.listHosts)
	l.vlcm.routes(rt)
	l.rest.Handle("/api", rt) // JSON-RPC
	l.rest.Handle("/api/", rt)
}

func (rt *restRouter) login(c *restCall) {
	user, password, ok := c.r.BasicAuth()
	if !ok || !rt.validCredentials(user, password) {
		vapiError(c.w, http.StatusUnauthorized, "UNAUTHENTICATED", "Authentication failed: wrong user name or password.")
		return
	}
	jsonhttp.Write(c.w, http.StatusCreated, rt.newSession(user))
}

func (rt *restRouter) logout(c *restCall) {
	rt.endSession(c.r.Header.Get(sessionHeader))
	c.w.WriteHeader(http.StatusNoContent)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// ---- vAPI errors -------------------------------------------------------------------------------------------------

// vapiMessage is a vAPI LocalizableMessage.
type vapiMessage struct {
	ID             string   `json:"id"`
	DefaultMessage string   `json:"default_message"`
	Args           []string `json:"args"`
}

// vapiErr is a vAPI standard error (com.vmware.vapi.std.errors.*): the body of a 4xx/5xx answer or a task's error.
type vapiErr struct {
	ErrorType string        `json:"error_type"`
	Messages  []vapiMessage `json:"messages"`
	Data      interface{}   `json:"data,omitempty"`
}

func newVapiErr(errorType, format string, args ...interface{}) *vapiErr {
	return &vapiErr{ErrorType: errorType, Messages: []vapiMessage{message("com.vmware.lab.error", format, args...)}}
}

func message(id, format string, args ...interface{}) vapiMessage {
	return vapiMessage{ID: id, DefaultMessage: fmt.Sprintf(format, args...), Args: []string{}}
}

func (e *vapiErr) Error() string { return e.Messages[0].DefaultMessage }

var vapiStatus = map[string]int{
	"ALREADY_EXISTS": http.StatusBadRequest, "INVALID_ARGUMENT": http.StatusBadRequest,
	"NOT_ALLOWED_IN_CURRENT_STATE": http.StatusBadRequest, "RESOURCE_IN_USE": http.StatusBadRequest,
	"NOT_FOUND": http.StatusNotFound, "UNAUTHENTICATED": http.StatusUnauthorized,
}

func (c *restCall) fail(e *vapiErr) {
	status, ok := vapiStatus[e.ErrorType]
	if !ok {
		status = http.StatusInternalServerError
	}
	jsonhttp.Write(c.w, status, e)
}

func vapiError(w http.ResponseWriter, status int, errorType, format string, args ...interface{}) {
	jsonhttp.Write(w, status, newVapiErr(errorType, format, args...))
}

// decode reads a JSON request body strictly: unknown fields are an INVALID_ARGUMENT, as in vAPI.
func (c *restCall) decode(v interface{}) bool {
	dec := json.NewDecoder(c.r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		c.fail(newVapiErr("INVALID_ARGUMENT", "The request body of %s %s is not valid: %v.", c.r.Method,
			c.r.URL.Path, err))
		return false
	}
	return true
}

// ---- CIS tasks ---------------------------------------------------------------------------------------------------

// restTask is a long operation started with ?vmw-task=true, read with GET /api/cis/tasks/{task}.
type restTask struct {
	ID        string
	Service   string
	Operation string
	Target    map[string]string
	User      string
	Status    string // PENDING, RUNNING, SUCCEEDED, FAILED
	Completed int64
	Total     int64
	Progress  string
	Result    interface{}
	Err       *vapiErr
	Started   time.Time
	Ended     time.Time
}

// taskInfo is the JSON of com.vmware.cis.task.Info.
type taskInfo struct {
	Description vapiMessage       `json:"description"`
	Service     string            `json:"service"`
	Operation   string            `json:"operation"`
	Target      map[string]string `json:"target,omitempty"`
	Status      string            `json:"status"`
	Cancelable  bool              `json:"cancelable"`
	Error       *vapiErr          `json:"error,omitempty"`
	StartTime   string            `json:"start_time,omitempty"`
	EndTime     string            `json:"end_time,omitempty"`
	User        string            `json:"user"`
	Progress    *taskProgress     `json:"progress,omitempty"`
	Result      interface{}       `json:"result,omitempty"`
}

type taskProgress struct {
	Total     int64       `json:"total"`
	Completed int64       `json:"completed"`
	Message   vapiMessage `json:"message"`
}

func vapiTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// info is the task's JSON. The caller holds l.mu.
func (t *restTask) info() taskInfo {
	i := taskInfo{
		Description: message("com.vmware.lab.task", "%s.%s", t.Service, t.Operation),
		Service:     t.Service, Operation: t.Operation, Target: t.Target, Status: t.Status, User: t.User,
		Result: t.Result, Error: t.Err,
	}
	if t.Status != "PENDING" {
		i.StartTime = vapiTime(t.Started)
		i.Progress = &taskProgress{Total: t.Total, Completed: t.Completed, Message: message(
			"com.vmware.lab.task.progress", "%s", t.Progress)}
	}
	if !t.Ended.IsZero() {
		i.EndTime = vapiTime(t.Ended)
	}
	return i
}

// startTask registers a task and runs work in the background; work returns the result or the error. The
// caller holds l.mu; work runs without it and takes it for every change (setProgress does too).
func (l *Lab) startTask(c *restCall, service, operation string, target map[string]string,
	work func(t *restTask) (interface{}, *vapiErr)) *restTask {
	t := &restTask{ID: randomHex(16) + ":" + service, Service: service, Operation: operation, Target: target,
		User: c.user, Status: "PENDING", Total: 1}
	l.vlcm.tasks[t.ID] = t
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		l.mu.Lock()
		t.Status, t.Started, t.Progress = "RUNNING", time.Now(), operation+" started"
		l.mu.Unlock()
		result, err := work(t)
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Ended = time.Now()
		if err != nil {
			t.Status, t.Err = "FAILED", err
			l.logf("REST task %s.%s failed: %s", service, operation, err.Error())
			return
		}
		t.Status, t.Result, t.Completed, t.Progress = "SUCCEEDED", result, t.Total, operation+" completed"
	}()
	jsonhttp.Write(c.w, http.StatusAccepted, t.ID)
	return t
}

// setProgress records progress; completed only grows, as the API promises.
func (l *Lab) setProgress(t *restTask, completed, total int64, format string, args ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if completed > t.Completed {
		t.Completed = completed
	}
	t.Total = total
	t.Progress = fmt.Sprintf(format, args...)
}

func (l *Lab) getTask(c *restCall) {
	l.mu.Lock()
	t := l.vlcm.tasks[c.params["task"]]
	var info taskInfo
	if t != nil {
		info = t.info()
	}
	l.mu.Unlock()
	if t == nil {
		c.fail(newVapiErr("NOT_FOUND", "There is no task %s.", c.params["task"]))
		return
	}
	jsonhttp.Write(c.w, http.StatusOK, info)
}

// ---- vcenter inventory lists (names to identifiers) --------------------------------------------------------------

// filter holds the values of a repeated query parameter (names=a&names=b); empty matches everything.
type filter map[string]bool

func queryFilter(c *restCall, key string) filter {
	f := filter{}
	for _, v := range c.r.URL.Query()[key] {
		for _, part := range strings.Split(v, ",") {
			if part != "" {
				f[part] = true
			}
		}
	}
	return f
}

func (f filter) allows(value string) bool { return len(f) == 0 || f[value] }

func (l *Lab) listDatacenters(c *restCall) {
	names := queryFilter(c, "names")
	l.mu.Lock()
	out := []map[string]string{}
	for _, ref := range l.datacenters {
		if n := name(ref); names.allows(n) {
			out = append(out, map[string]string{"datacenter": ref.Value, "name": n})
		}
	}
	l.mu.Unlock()
	jsonhttp.Write(c.w, http.StatusOK, out)
}

func (l *Lab) listClusters(c *restCall) {
	names, datacenters := queryFilter(c, "names"), queryFilter(c, "datacenters")
	l.mu.Lock()
	out := []map[string]interface{}{}
	for _, ref := range l.clusters {
		cluster, ok := simulator.Map.Get(ref).(*simulator.ClusterComputeResource)
		dc, _ := ancestor(ref, "Datacenter")
		if !ok || !names.allows(cluster.Name) || !datacenters.allows(dc.Value) {
			continue
		}
		j := clusterState(cluster)
		out = append(out, map[string]interface{}{"cluster": ref.Value, "name": cluster.Name,
			"drs_enabled": j.DRS.Enabled, "ha_enabled": false})
	}
	l.mu.Unlock()
	jsonhttp.Write(c.w, http.StatusOK, out)
}

var connectionStates = map[types.HostSystemConnectionState]string{
	types.HostSystemConnectionStateConnected:     "CONNECTED",
	types.HostSystemConnectionStateDisconnected:  "DISCONNECTED",
	types.HostSystemConnectionStateNotResponding: "NOT_RESPONDING",
}

func (l *Lab) listHosts(c *restCall) {
	names, clusters := queryFilter(c, "names"), queryFilter(c, "clusters")
	l.mu.Lock()
	out := []map[string]string{}
	for _, h := range l.hosts {
		obj := l.hostObject(h.ref)
		if obj == nil || !names.allows(obj.Name) {
			continue
		}
		if len(clusters) > 0 && (obj.Parent == nil || !clusters[obj.Parent.Value]) {
			continue
		}
		out = append(out, map[string]string{"host": h.ref.Value, "name": obj.Name,
			"connection_state": connectionStates[obj.Runtime.ConnectionState],
			"power_state":      "POWERED_ON"})
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
	jsonhttp.Write(c.w, http.StatusOK, out)
}
