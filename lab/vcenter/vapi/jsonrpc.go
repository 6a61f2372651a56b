package vapi

import (
	"encoding/json"
	"log"
	"net/http"
	"strings"

	"vcsim/jsonhttp"
)

// The vSphere Automation API over JSON-RPC 2.0, the protocol of VMware's vSphere Automation SDKs
// (vmware.vapi.vsphere.client.create_vsphere_client): every call is POST /api with
//
//	{"jsonrpc":"2.0","method":"invoke","id":…,"params":{"serviceId":"com.vmware.vcenter.VM","operationId":"list",
//	 "input":{"STRUCTURE":{"operation-input":{…}}},"ctx":{"appCtx":{…},"securityCtx":{"schemeId":…}}}}
//
// and the answer is {"jsonrpc":"2.0","id":…,"result":{"output":…}} or {"result":{"error":{"ERROR":{…}}}}. Data
// values carry their vAPI type as a wrapper: {"STRUCTURE":{"<struct name>":{fields}}}, {"OPTIONAL":value or null},
// {"SECRET":"…"}, {"ERROR":{"<error name>":{fields}}}; lists, strings, integers, booleans and enumeration values are
// plain JSON. Sources: vmware-vapi-runtime 9.1.1.0 (vmware/vapi/data/serializers/jsonrpc.py, the encoder and
// decoder; vmware/vapi/protocol/client/msg/json_connector.py, the request and its vapi-service/vapi-operation
// headers; vmware/vapi/security/{user_password,session}.py, the security contexts) and vmware-vcenter 9.1.1.0 (the
// service, operation and structure names of com/vmware/vcenter_client.py).
//
// Sessions are the REST API's (rest.go): an id from POST /api/session works as a JSON-RPC session_id and the reverse,
// since both front ends of vCenter's vAPI endpoint share one session store (not confirmed in VMware's documentation;
// the SDK's create_vsphere_client(session_id=…) takes an id from any source).

// The security schemes of a call's securityCtx: user and password (session creation only), or a session id.
const (
	SchemeUserPassword = "com.vmware.vapi.std.security.user_pass"
	SchemeSession      = "com.vmware.vapi.std.security.session_id"
)

// JSON-RPC 2.0 error codes the vAPI runtime uses (jsonrpc.py, JsonRpc20Error).
const (
	RPCParseError       = -32700
	RPCInvalidRequest   = -32600
	RPCMethodNotFound   = -32601
	RPCInvalidParams    = -32602
	RPCInvalidOperation = -31001
)

// Struct is a structure value: {"STRUCTURE":{name:{fields}}}.
type Struct struct {
	name   string
	fields map[string]interface{}
}

// NewStruct is a structure value of that structure name.
func NewStruct(name string, fields map[string]interface{}) Struct { return Struct{name, fields} }

func (s Struct) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]interface{}{"STRUCTURE": map[string]interface{}{s.name: s.fields}})
}

// Optional is an optional value: {"OPTIONAL":value}, {"OPTIONAL":null} when unset (value nil).
type Optional struct{ value interface{} }

func (o Optional) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]interface{}{"OPTIONAL": o.value})
}

// OptionalOf wraps value as an optional: set, or unset when value is nil.
func OptionalOf(value interface{}) Optional { return Optional{value} }

// OptionalString is unset for "".
func OptionalString(s string) Optional {
	if s == "" {
		return Optional{}
	}
	return Optional{s}
}

type vapiSecret string

func (s vapiSecret) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"SECRET": string(s)})
}

// vapiErrorValue is a standard error as a method result: {"ERROR":{"com.vmware.vapi.std.errors.not_found":{…}}}.
type vapiErrorValue struct{ err *Err }

func (e vapiErrorValue) MarshalJSON() ([]byte, error) {
	messages := make([]interface{}, len(e.err.Messages))
	for i, m := range e.err.Messages {
		messages[i] = Localizable(m)
	}
	fields := map[string]interface{}{"messages": messages, "data": Optional{},
		"error_type": Optional{e.err.ErrorType}}
	if e.err.ErrorType == "UNAUTHENTICATED" || e.err.ErrorType == "UNAUTHORIZED" {
		fields["challenge"] = Optional{}
	}
	name := "com.vmware.vapi.std.errors." + strings.ToLower(e.err.ErrorType)
	return json.Marshal(map[string]interface{}{"ERROR": map[string]interface{}{name: fields}})
}

// Localizable is a com.vmware.vapi.std.localizable_message.
func Localizable(m Message) Struct {
	args := m.Args
	if args == nil {
		args = []string{}
	}
	return Struct{"com.vmware.vapi.std.localizable_message", map[string]interface{}{"id": m.ID,
		"default_message": m.DefaultMessage, "args": args, "params": Optional{}, "localized": Optional{}}}
}

// rpcRequest is the JSON-RPC envelope. ID stays raw: the answer echoes it as sent (string, number or null).
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      json.RawMessage `json:"id"`
	Params  struct {
		ServiceID   string                 `json:"serviceId"`
		OperationID string                 `json:"operationId"`
		Input       interface{}            `json:"input"`
		Ctx         map[string]interface{} `json:"ctx"`
	} `json:"params"`
}

// Invocation is one operation invocation: its input fields and, once authenticated, its session.
type Invocation struct {
	rt        *Router
	Input     map[string]interface{}
	sessionID string
	session   *apiSession
}

// Operation runs an operation; it returns the output value or a standard error.
type Operation func(c *Invocation) (interface{}, *Err)

func rpcAnswer(w http.ResponseWriter, id json.RawMessage, key string, value interface{}) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	jsonhttp.Write(w, http.StatusOK, map[string]interface{}{"jsonrpc": "2.0", "id": id, key: value})
}

func rpcFailure(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	rpcAnswer(w, id, "error", map[string]interface{}{"code": code, "message": message})
}

// invoke serves POST /api.
func (rt *Router) invoke(c *Call) {
	var req rpcRequest
	if err := json.NewDecoder(c.R.Body).Decode(&req); err != nil {
		rpcFailure(c.W, nil, RPCParseError, "Parse error.")
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		rpcFailure(c.W, nil, RPCInvalidRequest, "Invalid Request.")
		return
	}
	if req.Method != "invoke" {
		rpcFailure(c.W, req.ID, RPCMethodNotFound, "Method not found.")
		return
	}
	service, operation := req.Params.ServiceID, req.Params.OperationID
	input, ok := StructFields(req.Params.Input)
	if service == "" || operation == "" || !ok {
		rpcFailure(c.W, req.ID, RPCInvalidParams, "Invalid params.")
		return
	}
	if h := c.R.Header.Get("vapi-service"); (h != "" && h != service) ||
		(c.R.Header.Get("vapi-operation") != "" && c.R.Header.Get("vapi-operation") != operation) {
		rpcFailure(c.W, req.ID, RPCInvalidOperation, "Mismatching operation identifier in HTTP header and payload")
		return
	}
	output, verr := rt.dispatch(service, operation, input, req.Params.Ctx)
	if verr != nil {
		log.Printf("vAPI %s.%s: %s", service, operation, verr.Error())
		rpcAnswer(c.W, req.ID, "result", map[string]interface{}{"error": vapiErrorValue{verr}})
		return
	}
	rpcAnswer(c.W, req.ID, "result", map[string]interface{}{"output": output})
}

// dispatch authenticates and runs an operation. Only session creation takes user and password; every other
// operation needs a session, as on vCenter.
func (rt *Router) dispatch(service, operation string, input map[string]interface{},
	ctx map[string]interface{}) (interface{}, *Err) {
	run, ok := rt.operations[service+"."+operation]
	if !ok {
		return nil, NewErr("OPERATION_NOT_FOUND", "Operation %s.%s is not found.", service, operation)
	}
	security, _ := ctx["securityCtx"].(map[string]interface{})
	scheme, _ := security["schemeId"].(string)
	call := &Invocation{rt: rt, Input: input}
	switch {
	case service == "com.vmware.cis.session" && operation == "create":
		user, _ := security["userName"].(string)
		password, _ := security["password"].(string)
		if scheme != SchemeUserPassword || !rt.validCredentials(user, password) {
			return nil, NewErr("UNAUTHENTICATED", "Authentication failed: wrong user name or password.")
		}
		call.session = &apiSession{user: user}
	case scheme == SchemeSession:
		call.sessionID, _ = security["sessionId"].(string)
		if call.session = rt.session(call.sessionID); call.session == nil {
			return nil, NewErr("UNAUTHENTICATED", "The session is not authenticated (unknown or ended session).")
		}
	default:
		return nil, NewErr("UNAUTHENTICATED", "This method requires authentication.")
	}
	return run(call)
}

// Register serves an operation over JSON-RPC as "service.operation".
func (rt *Router) Register(name string, op Operation) {
	rt.operations[name] = op
}

// sessionOperations are com.vmware.cis.session's.
func sessionOperations() map[string]Operation {
	return map[string]Operation{
		"com.vmware.cis.session.create": func(c *Invocation) (interface{}, *Err) {
			return vapiSecret(c.rt.newSession(c.session.user)), nil
		},
		"com.vmware.cis.session.get": func(c *Invocation) (interface{}, *Err) {
			return Struct{"com.vmware.cis.session.info", map[string]interface{}{"user": c.session.user,
				"created_time": Time(c.session.created), "last_accessed_time": Time(c.session.lastAccessed)}}, nil
		},
		"com.vmware.cis.session.delete": func(c *Invocation) (interface{}, *Err) {
			c.rt.endSession(c.sessionID)
			return nil, nil
		},
	}
}

// ---- decoding input values -------------------------------------------------------------------------------------

// StructFields unwraps {"STRUCTURE":{name:{fields}}}.
func StructFields(v interface{}) (map[string]interface{}, bool) {
	wrapper, ok := v.(map[string]interface{})
	if !ok || len(wrapper) != 1 {
		return nil, false
	}
	named, ok := wrapper["STRUCTURE"].(map[string]interface{})
	if !ok || len(named) != 1 {
		return nil, false
	}
	for _, fields := range named {
		f, ok := fields.(map[string]interface{})
		return f, ok
	}
	return nil, false
}

// Unwrap unwraps {"OPTIONAL":value}; it reports false when unset. A bare value counts as set.
func Unwrap(v interface{}) (interface{}, bool) {
	if wrapper, ok := v.(map[string]interface{}); ok {
		if inner, has := wrapper["OPTIONAL"]; has && len(wrapper) == 1 {
			return inner, inner != nil
		}
	}
	return v, v != nil
}

// Str reads a required string field of the input.
func (c *Invocation) Str(field string) (string, *Err) {
	s, ok := c.Input[field].(string)
	if !ok || s == "" {
		return "", NewErr("INVALID_ARGUMENT", "Missing or invalid value for the required field %q.", field)
	}
	return s, nil
}

// FilterSpec returns the fields of the optional "filter" input (empty when unset).
func (c *Invocation) FilterSpec() (map[string]interface{}, *Err) {
	v, set := Unwrap(c.Input["filter"])
	if !set {
		return map[string]interface{}{}, nil
	}
	fields, ok := StructFields(v)
	if !ok {
		return nil, NewErr("INVALID_ARGUMENT", "The filter is not a filter specification structure.")
	}
	return fields, nil
}

// SetFilter reads an optional set of strings of a filter spec; unset or empty matches everything, as the
// FilterSpec documentation of every vcenter list operation states ("If unset or empty, … match the filter").
func SetFilter(spec map[string]interface{}, field string) (Filter, *Err) {
	f := Filter{}
	v, set := Unwrap(spec[field])
	if !set {
		return f, nil
	}
	items, ok := v.([]interface{})
	if !ok {
		return nil, NewErr("INVALID_ARGUMENT", "The filter field %q is not a set of strings.", field)
	}
	for _, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, NewErr("INVALID_ARGUMENT", "The filter field %q holds a value that is not a string: %v.",
				field, item)
		}
		f[s] = true
	}
	return f, nil
}

// OptionalBool reads an optional boolean field of a filter spec.
func OptionalBool(spec map[string]interface{}, field string) (value, set bool, err *Err) {
	v, set := Unwrap(spec[field])
	if !set {
		return false, false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, NewErr("INVALID_ARGUMENT", "The filter field %q is not a boolean: %v.", field, v)
	}
	return b, true, nil
}

// NotFound is the error of an object that does not exist.
func NotFound(kind, id string) *Err {
	return NewErr("NOT_FOUND", "%s with identifier %s was not found.", kind, id)
}
