// Package vapi is the protocol side of vCenter's vSphere Automation API under /api: REST routes with sessions, the
// API's standard errors, CIS tasks and JSON-RPC 2.0 (jsonrpc.go). The operations themselves (vLCM,
// com.vmware.vcenter) belong to the lab, which registers them.
package vapi

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"vcsim/jsonhttp"
)

// SessionHeader carries the session id of a REST request (from POST /api/session).
const SessionHeader = "vmware-api-session-id"

// route is one operation, written as VMware's OpenAPI description writes its path: a template with {names} and,
// for task operations, the fixed query parameters (/api/esx/settings/depots/offline?vmw-task=true).
type route struct {
	method   string
	pattern  string
	segments []string
	query    url.Values
	public   bool // served without a session (login)
	handle   func(*Call)
}

// Call is a matched request: path parameters, the session's user, the response writer.
type Call struct {
	W      http.ResponseWriter
	R      *http.Request
	Params map[string]string
	User   string
}

// Router serves /api. Its Route method names the matched template, which the request counters use.
type Router struct {
	routes []*route

	// credentials returns the user and password SessionManager.Login accepts.
	credentials func() (string, string)
	// operations maps "service.operation" to its implementation, for JSON-RPC (jsonrpc.go).
	operations map[string]Operation

	mu       sync.Mutex
	sessions map[string]*apiSession // session id -> session, shared by REST and JSON-RPC (jsonrpc.go)
}

// apiSession is one vAPI session: com.vmware.cis.session's Info (user, created_time, last_accessed_time).
type apiSession struct {
	user         string
	created      time.Time
	lastAccessed time.Time
}

// NewRouter answers a router that serves sessions (POST, GET and DELETE /api/session) and JSON-RPC (POST /api) for
// the user and password credentials returns; the lab adds its routes and operations.
func NewRouter(credentials func() (string, string)) *Router {
	rt := &Router{credentials: credentials, operations: sessionOperations(), sessions: map[string]*apiSession{}}
	rt.Add(http.MethodPost, "/api/session", rt.login).public = true
	rt.Add(http.MethodDelete, "/api/session", rt.logout)
	rt.Add(http.MethodGet, "/api/session", func(c *Call) {
		s := rt.session(c.R.Header.Get(SessionHeader))
		if s == nil { // ended since the router checked it
			vapiError(c.W, http.StatusUnauthorized, "UNAUTHENTICATED", "Authentication required.")
			return
		}
		jsonhttp.Write(c.W, http.StatusOK, map[string]string{"user": s.user, "created_time": Time(s.created),
			"last_accessed_time": Time(s.lastAccessed)})
	})
	rt.Add(http.MethodPost, "/api", rt.invoke).public = true // JSON-RPC, authenticated per call (jsonrpc.go)
	return rt
}

// Add serves a route: method and a path template with {names} and, for task operations, fixed query parameters.
func (rt *Router) Add(method, pattern string, handle func(*Call)) *route {
	path, query := pattern, ""
	if i := strings.Index(pattern, "?"); i >= 0 {
		path, query = pattern[:i], pattern[i+1:]
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		panic(fmt.Sprintf("route %s: %v", pattern, err))
	}
	route := &route{method: method, pattern: pattern, segments: strings.Split(strings.Trim(path, "/"), "/"),
		query: values, handle: handle}
	rt.routes = append(rt.routes, route)
	return route
}

// match finds the route for a request: the path must fit the template and every fixed query parameter must be
// present; among several, the one with more fixed query parameters wins (…/software?action=apply over …/software).
// allowed lists the methods of routes whose path fits, for 405 answers.
func (rt *Router) match(r *http.Request) (route *route, params map[string]string, allowed []string) {
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

func (route *route) fits(segments []string) (map[string]string, bool) {
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

func (route *route) queryFits(query url.Values) bool {
	for key, want := range route.query {
		if query.Get(key) != want[0] {
			return false
		}
	}
	return true
}

// Route names the template that serves r, for the request counters (GET /lab/stats).
func (rt *Router) Route(r *http.Request) string {
	if route, _, _ := rt.match(r); route != nil {
		return route.pattern
	}
	return r.URL.Path
}

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	call := &Call{W: w, R: r, Params: params}
	if !route.public {
		user, ok := rt.user(r.Header.Get(SessionHeader))
		if !ok {
			vapiError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Authentication required.")
			return
		}
		call.User = user
	}
	route.handle(call)
}

func (rt *Router) user(session string) (string, bool) {
	s := rt.session(session)
	if s == nil {
		return "", false
	}
	return s.user, true
}

// session returns a copy of a live session, marking it accessed now, or nil.
func (rt *Router) session(id string) *apiSession {
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
func (rt *Router) validCredentials(user, password string) bool {
	wantUser, wantPassword := rt.credentials()
	return wantUser != "" && subtle.ConstantTimeCompare([]byte(user), []byte(wantUser)) == 1 &&
		subtle.ConstantTimeCompare([]byte(password), []byte(wantPassword)) == 1
}

// newSession opens a session for user and returns its id.
func (rt *Router) newSession(user string) string {
	id := randomHex(16)
	now := time.Now()
	rt.mu.Lock()
	rt.sessions[id] = &apiSession{user: user, created: now, lastAccessed: now}
	rt.mu.Unlock()
	return id
}

func (rt *Router) endSession(id string) {
	rt.mu.Lock()
	delete(rt.sessions, id)
	rt.mu.Unlock()
}

func (rt *Router) login(c *Call) {
	user, password, ok := c.R.BasicAuth()
	if !ok || !rt.validCredentials(user, password) {
		vapiError(c.W, http.StatusUnauthorized, "UNAUTHENTICATED", "Authentication failed: wrong user name or password.")
		return
	}
	jsonhttp.Write(c.W, http.StatusCreated, rt.newSession(user))
}

func (rt *Router) logout(c *Call) {
	rt.endSession(c.R.Header.Get(SessionHeader))
	c.W.WriteHeader(http.StatusNoContent)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// ---- vAPI errors -------------------------------------------------------------------------------------------------

// Message is a vAPI LocalizableMessage.
type Message struct {
	ID             string   `json:"id"`
	DefaultMessage string   `json:"default_message"`
	Args           []string `json:"args"`
}

// Err is a vAPI standard error (com.vmware.vapi.std.errors.*): the body of a 4xx/5xx answer or a task's error.
type Err struct {
	ErrorType string      `json:"error_type"`
	Messages  []Message   `json:"messages"`
	Data      interface{} `json:"data,omitempty"`
}

func NewErr(errorType, format string, args ...interface{}) *Err {
	return &Err{ErrorType: errorType, Messages: []Message{NewMessage("com.vmware.lab.error", format, args...)}}
}

func NewMessage(id, format string, args ...interface{}) Message {
	return Message{ID: id, DefaultMessage: fmt.Sprintf(format, args...), Args: []string{}}
}

func (e *Err) Error() string { return e.Messages[0].DefaultMessage }

var vapiStatus = map[string]int{
	"ALREADY_EXISTS": http.StatusBadRequest, "INVALID_ARGUMENT": http.StatusBadRequest,
	"NOT_ALLOWED_IN_CURRENT_STATE": http.StatusBadRequest, "RESOURCE_IN_USE": http.StatusBadRequest,
	"NOT_FOUND": http.StatusNotFound, "UNAUTHENTICATED": http.StatusUnauthorized,
}

func (c *Call) Fail(e *Err) {
	status, ok := vapiStatus[e.ErrorType]
	if !ok {
		status = http.StatusInternalServerError
	}
	jsonhttp.Write(c.W, status, e)
}

func vapiError(w http.ResponseWriter, status int, errorType, format string, args ...interface{}) {
	jsonhttp.Write(w, status, NewErr(errorType, format, args...))
}

// decode reads a JSON request body strictly: unknown fields are an INVALID_ARGUMENT, as in vAPI.
func (c *Call) Decode(v interface{}) bool {
	dec := json.NewDecoder(c.R.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		c.Fail(NewErr("INVALID_ARGUMENT", "The request body of %s %s is not valid: %v.", c.R.Method,
			c.R.URL.Path, err))
		return false
	}
	return true
}

// ---- CIS tasks ---------------------------------------------------------------------------------------------------

// Task is a long operation started with ?vmw-task=true, read with GET /api/cis/tasks/{task}.
type Task struct {
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
	Err       *Err
	Started   time.Time
	Ended     time.Time
}

// newTask is a pending task of user's, with a new id.
func newTask(service, operation string, target map[string]string, user string) *Task {
	return &Task{ID: randomHex(16) + ":" + service, Service: service, Operation: operation, Target: target,
		User: user, Status: "PENDING", Total: 1}
}

// Tasks are the CIS tasks of a server. Tasks and their work change under lock, the lock of the state the work
// changes, so that a task's information and that state are read together; background counts the running work.
type Tasks struct {
	lock       sync.Locker
	background *sync.WaitGroup
	byID       map[string]*Task
}

// NewTasks answers an empty task list whose tasks change under lock and count in background.
func NewTasks(lock sync.Locker, background *sync.WaitGroup) *Tasks {
	return &Tasks{lock: lock, background: background, byID: map[string]*Task{}}
}

// Start registers a task and runs work in the background; work returns the result or the error. The caller holds
// the lock; work runs without it and takes it for every change (SetProgress does too). The call is answered with
// the task's id.
func (ts *Tasks) Start(c *Call, service, operation string, target map[string]string,
	work func(t *Task) (interface{}, *Err)) *Task {
	t := newTask(service, operation, target, c.User)
	ts.byID[t.ID] = t
	ts.background.Add(1)
	go func() {
		defer ts.background.Done()
		ts.lock.Lock()
		t.Status, t.Started, t.Progress = "RUNNING", time.Now(), operation+" started"
		ts.lock.Unlock()
		result, err := work(t)
		ts.lock.Lock()
		defer ts.lock.Unlock()
		t.Ended = time.Now()
		if err != nil {
			t.Status, t.Err = "FAILED", err
			log.Printf("REST task %s.%s failed: %s", service, operation, err.Error())
			return
		}
		t.Status, t.Result, t.Completed, t.Progress = "SUCCEEDED", result, t.Total, operation+" completed"
	}()
	jsonhttp.Write(c.W, http.StatusAccepted, t.ID)
	return t
}

// SetProgress records progress; completed only grows, as the API promises.
func (ts *Tasks) SetProgress(t *Task, completed, total int64, format string, args ...interface{}) {
	ts.lock.Lock()
	defer ts.lock.Unlock()
	if completed > t.Completed {
		t.Completed = completed
	}
	t.Total = total
	t.Progress = fmt.Sprintf(format, args...)
}

// Serve answers GET /api/cis/tasks/{task}.
func (ts *Tasks) Serve(c *Call) {
	ts.lock.Lock()
	t := ts.byID[c.Params["task"]]
	var info TaskInfo
	if t != nil {
		info = t.Info()
	}
	ts.lock.Unlock()
	if t == nil {
		c.Fail(NewErr("NOT_FOUND", "There is no task %s.", c.Params["task"]))
		return
	}
	jsonhttp.Write(c.W, http.StatusOK, info)
}

// taskFilter is the Cis Tasks FilterSpec: "If multiple properties are specified, only tasks matching all of the
// properties match the filter. Currently at least one of tasks or services must be specified and not empty"; an
// unset or empty property matches every task (vSphere Automation API, Cis Tasks list, POST /api/cis/tasks?action=list:
// developer.broadcom.com/xapis/vsphere-automation-api/latest/api/cis/tasks__action=list/post).
type taskFilter struct {
	Tasks      []string            `json:"tasks"`
	Services   []string            `json:"services"`
	Operations []string            `json:"operations"`
	Status     []string            `json:"status"`
	Targets    []map[string]string `json:"targets"`
	Users      []string            `json:"users"`
}

type taskListRequest struct {
	FilterSpec *taskFilter      `json:"filter_spec"`
	ResultSpec *json.RawMessage `json:"result_spec"`
}

func (f *taskFilter) matches(t *Task) bool {
	in := func(list []string, s string) bool {
		if len(list) == 0 {
			return true
		}
		for _, item := range list {
			if item == s {
				return true
			}
		}
		return false
	}
	target := len(f.Targets) == 0
	for _, want := range f.Targets {
		if want["type"] == t.Target["type"] && want["id"] == t.Target["id"] {
			target = true
		}
	}
	return target && in(f.Tasks, t.ID) && in(f.Services, t.Service) && in(f.Operations, t.Operation) &&
		in(f.Status, t.Status) && in(f.Users, t.User)
}

// List answers POST /api/cis/tasks?action=list: the tasks the filter matches, by id ("information about at most 1000
// visible tasks matching the FilterSpec").
func (ts *Tasks) List(c *Call) {
	var req taskListRequest
	if !c.Decode(&req) {
		return
	}
	if req.FilterSpec == nil || (len(req.FilterSpec.Tasks) == 0 && len(req.FilterSpec.Services) == 0) {
		c.Fail(NewErr("INVALID_ARGUMENT", "The filter_spec must name tasks or services."))
		return
	}
	ts.lock.Lock()
	found := map[string]TaskInfo{}
	for id, t := range ts.byID {
		if len(found) < 1000 && req.FilterSpec.matches(t) {
			found[id] = t.Info()
		}
	}
	ts.lock.Unlock()
	jsonhttp.Write(c.W, http.StatusOK, found)
}

// TaskInfo is the JSON of com.vmware.cis.task.Info.
type TaskInfo struct {
	Description Message           `json:"description"`
	Service     string            `json:"service"`
	Operation   string            `json:"operation"`
	Target      map[string]string `json:"target,omitempty"`
	Status      string            `json:"status"`
	Cancelable  bool              `json:"cancelable"`
	Error       *Err              `json:"error,omitempty"`
	StartTime   string            `json:"start_time,omitempty"`
	EndTime     string            `json:"end_time,omitempty"`
	User        string            `json:"user"`
	Progress    *TaskProgress     `json:"progress,omitempty"`
	Result      interface{}       `json:"result,omitempty"`
}

type TaskProgress struct {
	Total     int64   `json:"total"`
	Completed int64   `json:"completed"`
	Message   Message `json:"message"`
}

func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Info is the task's JSON. The caller holds the lock its changes are made under.
func (t *Task) Info() TaskInfo {
	i := TaskInfo{
		Description: NewMessage("com.vmware.lab.task", "%s.%s", t.Service, t.Operation),
		Service:     t.Service, Operation: t.Operation, Target: t.Target, Status: t.Status, User: t.User,
		Result: t.Result, Error: t.Err,
	}
	if t.Status != "PENDING" {
		i.StartTime = Time(t.Started)
		i.Progress = &TaskProgress{Total: t.Total, Completed: t.Completed, Message: NewMessage(
			"com.vmware.lab.task.progress", "%s", t.Progress)}
	}
	if !t.Ended.IsZero() {
		i.EndTime = Time(t.Ended)
	}
	return i
}

// ---- vcenter inventory lists (names to identifiers) --------------------------------------------------------------

// Filter holds the values of a repeated query parameter (names=a&names=b); empty matches everything.
type Filter map[string]bool

func QueryFilter(c *Call, key string) Filter {
	f := Filter{}
	for _, v := range c.R.URL.Query()[key] {
		for _, part := range strings.Split(v, ",") {
			if part != "" {
				f[part] = true
			}
		}
	}
	return f
}

func (f Filter) Allows(value string) bool { return len(f) == 0 || f[value] }
