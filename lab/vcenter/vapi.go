package main

import (
	"encoding/json"
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

const (
	schemeUserPassword = "com.vmware.vapi.std.security.user_pass"
	schemeSession      = "com.vmware.vapi.std.security.session_id"
)

// JSON-RPC 2.0 error codes the vAPI runtime uses (jsonrpc.py, JsonRpc20Error).
const (
	rpcParseError       = -32700
	rpcInvalidRequest   = -32600
	rpcMethodNotFound   = -32601
	rpcInvalidParams    = -32602
	rpcInvalidOperation = -31001
)

// vapiStruct is a structure value: {"STRUCTURE":{name:{fields}}}.
type vapiStruct struct {
	name   string
	fields map[string]interface{}
}

func (s vapiStruct) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]interface{}{"STRUCTURE": map[string]interface{}{s.name: s.fields}})
}

// vapiOptional is an optional value: {"OPTIONAL":value}, {"OPTIONAL":null} when unset (value nil).
type vapiOptional struct{ value interface{} }

func (o vapiOptional) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]interface{}{"OPTIONAL": o.value})
}

// optionalString is unset for "".
func optionalString(s string) vapiOptional {
	if s == "" {
		return vapiOptional{}
	}
	return vapiOptional{s}
}

type vapiSecret string

func (s vapiSecret) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"SECRET": string(s)})
}

// vapiErrorValue is a standard error as a method result: {"ERROR":{"com.vmware.vapi.std.errors.not_found":{…}}}.
type vapiErrorValue struct{ err *vapiErr }

func (e vapiErrorValue) MarshalJSON() ([]byte, error) {
	messages := make([]interface{}, len(e.err.Messages))
	for i, m := range e.err.Messages {
		messages[i] = localizable(m)
	}
	fields := map[string]interface{}{"messages": messages, "data": vapiOptional{},
		"error_type": vapiOptional{e.err.ErrorType}}
	if e.err.ErrorType == "UNAUTHENTICATED" || e.err.ErrorType == "UNAUTHORIZED" {
		fields["challenge"] = vapiOptional{}
	}
	name := "com.vmware.vapi.std.errors." + strings.ToLower(e.err.ErrorType)
	return json.Marshal(map[string]interface{}{"ERROR": map[string]interface{}{name: fields}})
}

// localizable is a com.vmware.vapi.std.localizable_message.
func localizable(m vapiMessage) vapiStruct {
	args := m.Args
	if args == nil {
		args = []string{}
	}
	return vapiStruct{"com.vmware.vapi.std.localizable_message", map[string]interface{}{"id": m.ID,
		"default_message": m.DefaultMessage, "args": args, "params": vapiOptional{}, "localized": vapiOptional{}}}
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

// vapiCall is one operation invocation: its input fields and, once authenticated, its session.
type vapiCall struct {
	rt        *restRouter
	lab       *Lab
	input     map[string]interface{}
	sessionID string
	session   *apiSession
}

// vapiOperation runs an operation; it returns the output value or a standard error.
type vapiOperation func(c *vapiCall) (interface{}, *vapiErr)

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
func (rt *restRouter) invoke(c *restCall) {
	var req rpcRequest
	if err := json.NewDecoder(c.r.Body).Decode(&req); err != nil {
		rpcFailure(c.w, nil, rpcParseError, "Parse error.")
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		rpcFailure(c.w, nil, rpcInvalidRequest, "Invalid Request.")
		return
	}
	if req.Method != "invoke" {
		rpcFailure(c.w, req.ID, rpcMethodNotFound, "Method not found.")
		return
	}
	service, operation := req.Params.ServiceID, req.Params.OperationID
	input, ok := structFields(req.Params.Input)
	if service == "" || operation == "" || !ok {
		rpcFailure(c.w, req.ID, rpcInvalidParams, "Invalid params.")
		return
	}
	if h := c.r.Header.Get("vapi-service"); (h != "" && h != service) ||
		(c.r.Header.Get("vapi-operation") != "" && c.r.Header.Get("vapi-operation") != operation) {
		rpcFailure(c.w, req.ID, rpcInvalidOperation, "Mismatching operation identifier in HTTP header and payload")
		return
	}
	output, verr := rt.dispatch(service, operation, input, req.Params.Ctx)
	if verr != nil {
		rt.lab.logf("vAPI %s.%s: %s", service, operation, verr.Error())
		rpcAnswer(c.w, req.ID, "result", map[string]interface{}{"error": vapiErrorValue{verr}})
		return
	}
	rpcAnswer(c.w, req.ID, "result", map[string]interface{}{"output": output})
}

// dispatch authenticates and runs an operation. Only session creation takes user and password; every other
// operation needs a session, as on vCenter.
func (rt *restRouter) dispatch(service, operation string, input map[string]interface{},
	ctx map[string]interface{}) (interface{}, *vapiErr) {
	run, ok := vapiOperations[service+"."+operation]
	if !ok {
		return nil, newVapiErr("OPERATION_NOT_FOUND", "Operation %s.%s is not found.", service, operation)
	}
	security, _ := ctx["securityCtx"].(map[string]interface{})
	scheme, _ := security["schemeId"].(string)
	call := &vapiCall{rt: rt, lab: rt.lab, input: input}
	switch {
	case service == "com.vmware.cis.session" && operation == "create":
		user, _ := security["userName"].(string)
		password, _ := security["password"].(string)
		if scheme != schemeUserPassword || !rt.validCredentials(user, password) {
			return nil, newVapiErr("UNAUTHENTICATED", "Authentication failed: wrong user name or password.")
		}
		call.session = &apiSession{user: user}
	case scheme == schemeSession:
		call.sessionID, _ = security["sessionId"].(string)
		if call.session = rt.session(call.sessionID); call.session == nil {
			return nil, newVapiErr("UNAUTHENTICATED", "The session is not authenticated (unknown or ended session).")
		}
	default:
		return nil, newVapiErr("UNAUTHENTICATED", "This method requires authentication.")
	}
	return run(call)
}

// vapiOperations maps "service.operation" to its implementation (vapi_inventory.go for com.vmware.vcenter).
var vapiOperations map[string]vapiOperation

func init() {
	vapiOperations = map[string]vapiOperation{
		"com.vmware.cis.session.create": func(c *vapiCall) (interface{}, *vapiErr) {
			return vapiSecret(c.rt.newSession(c.session.user)), nil
		},
		"com.vmware.cis.session.get": func(c *vapiCall) (interface{}, *vapiErr) {
			return vapiStruct{"com.vmware.cis.session.info", map[string]interface{}{"user": c.session.user,
				"created_time": vapiTime(c.session.created), "last_accessed_time": vapiTime(c.session.lastAccessed)}}, nil
		},
		"com.vmware.cis.session.delete": func(c *vapiCall) (interface{}, *vapiErr) {
			c.rt.endSession(c.sessionID)
			return nil, nil
		},
	}
	for name, op := range vcenterOperations() {
		vapiOperations[name] = op
	}
}

// ---- decoding input values -------------------------------------------------------------------------------------

// structFields unwraps {"STRUCTURE":{name:{fields}}}.
func structFields(v interface{}) (map[string]interface{}, bool) {
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

// optional unwraps {"OPTIONAL":value}; it reports false when unset. A bare value counts as set.
func optional(v interface{}) (interface{}, bool) {
	if wrapper, ok := v.(map[string]interface{}); ok {
		if inner, has := wrapper["OPTIONAL"]; has && len(wrapper) == 1 {
			return inner, inner != nil
		}
	}
	return v, v != nil
}

// str reads a required string field of the input.
func (c *vapiCall) str(field string) (string, *vapiErr) {
	s, ok := c.input[field].(string)
	if !ok || s == "" {
		return "", newVapiErr("INVALID_ARGUMENT", "Missing or invalid value for the required field %q.", field)
	}
	return s, nil
}

// filterSpec returns the fields of the optional "filter" input (empty when unset).
func (c *vapiCall) filterSpec() (map[string]interface{}, *vapiErr) {
	v, set := optional(c.input["filter"])
	if !set {
		return map[string]interface{}{}, nil
	}
	fields, ok := structFields(v)
	if !ok {
		return nil, newVapiErr("INVALID_ARGUMENT", "The filter is not a filter specification structure.")
	}
	return fields, nil
}

// setFilter reads an optional set of strings of a filter spec; unset or empty matches everything, as the
// FilterSpec documentation of every vcenter list operation states ("If unset or empty, … match the filter").
func setFilter(spec map[string]interface{}, field string) (filter, *vapiErr) {
	f := filter{}
	v, set := optional(spec[field])
	if !set {
		return f, nil
	}
	items, ok := v.([]interface{})
	if !ok {
		return nil, newVapiErr("INVALID_ARGUMENT", "The filter field %q is not a set of strings.", field)
	}
	for _, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, newVapiErr("INVALID_ARGUMENT", "The filter field %q holds a value that is not a string: %v.",
				field, item)
		}
		f[s] = true
	}
	return f, nil
}

// optionalBool reads an optional boolean field of a filter spec.
func optionalBool(spec map[string]interface{}, field string) (value, set bool, err *vapiErr) {
	v, set := optional(spec[field])
	if !set {
		return false, false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, newVapiErr("INVALID_ARGUMENT", "The filter field %q is not a boolean: %v.", field, v)
	}
	return b, true, nil
}

func notFound(kind, id string) *vapiErr {
	return newVapiErr("NOT_FOUND", "%s with identifier %s was not found.", kind, id)
}
