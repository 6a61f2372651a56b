package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"vcsim/vapi"
)

// rpc sends one JSON-RPC invoke as the vSphere Automation SDK writes it and returns the decoded answer.
func (tl *testLab) rpc(t *testing.T, service, operation string, input map[string]interface{},
	security map[string]interface{}) map[string]interface{} {
	t.Helper()
	body, _ := json.Marshal(map[string]interface{}{"jsonrpc": "2.0", "method": "invoke", "id": "7",
		"params": map[string]interface{}{"serviceId": service, "operationId": operation,
			"input": map[string]interface{}{"STRUCTURE": map[string]interface{}{"operation-input": input}},
			"ctx":   map[string]interface{}{"appCtx": map[string]interface{}{}, "securityCtx": security}}})
	return tl.rawRPC(t, body)
}

// rawRPC posts body to /api with the given extra headers and returns the decoded answer.
func (tl *testLab) rawRPC(t *testing.T, body []byte, headers ...string) map[string]interface{} {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, tl.server.URL+"/api", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := tl.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]interface{}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&out) != nil {
		t.Fatalf("POST /api: %d", res.StatusCode)
	}
	return out
}

func sessionCtx(id string) map[string]interface{} {
	return map[string]interface{}{"schemeId": vapi.SchemeSession, "sessionId": id}
}

// rpcLogin creates a session with the user-password security context; the id comes back as a SECRET.
func (tl *testLab) rpcLogin(t *testing.T) string {
	t.Helper()
	out := tl.rpc(t, "com.vmware.cis.session", "create", map[string]interface{}{},
		map[string]interface{}{"schemeId": vapi.SchemeUserPassword, "userName": "lab", "password": "s3cret"})
	result, _ := out["result"].(map[string]interface{})
	secret, _ := result["output"].(map[string]interface{})
	id, _ := secret["SECRET"].(string)
	if out["id"] != "7" || id == "" {
		t.Fatalf("session create: %v", out)
	}
	return id
}

// rpcErrorType returns the error type of a method error ("" when the call succeeded) and the error's structure name.
func rpcErrorType(t *testing.T, out map[string]interface{}) (string, string) {
	t.Helper()
	result, _ := out["result"].(map[string]interface{})
	wrapper, ok := result["error"].(map[string]interface{})
	if !ok {
		return "", ""
	}
	for name, fields := range wrapper["ERROR"].(map[string]interface{}) {
		errorType := fields.(map[string]interface{})["error_type"].(map[string]interface{})["OPTIONAL"].(string)
		return errorType, name
	}
	t.Fatalf("error without a structure: %v", out)
	return "", ""
}

// summaries returns the fields of the structures of a list output.
func summaries(t *testing.T, out map[string]interface{}) []map[string]interface{} {
	t.Helper()
	result, _ := out["result"].(map[string]interface{})
	list, ok := result["output"].([]interface{})
	if !ok {
		t.Fatalf("not a list output: %v", out)
	}
	var fields []map[string]interface{}
	for _, item := range list {
		f, ok := vapi.StructFields(item)
		if !ok {
			t.Fatalf("not a structure: %v", item)
		}
		fields = append(fields, f)
	}
	return fields
}

func vmFilter(fields map[string]interface{}) map[string]interface{} {
	spec := map[string]interface{}{}
	for _, name := range []string{"vms", "names", "folders", "datacenters", "hosts", "clusters", "resource_pools",
		"power_states"} {
		spec[name] = map[string]interface{}{"OPTIONAL": fields[name]}
	}
	return map[string]interface{}{"filter": map[string]interface{}{"OPTIONAL": map[string]interface{}{
		"STRUCTURE": map[string]interface{}{"com.vmware.vcenter.VM.filter_spec": spec}}}}
}

func TestVapiVMListMatchesTheInventory(t *testing.T) {
	tl := startLab(t)
	session := tl.rpcLogin(t)
	all := summaries(t, tl.rpc(t, "com.vmware.vcenter.VM", "list", vmFilter(nil), sessionCtx(session)))
	var names []string
	for _, vm := range all {
		names = append(names, vm["name"].(string))
		if !strings.HasPrefix(vm["vm"].(string), "vm-") {
			t.Errorf("identifier %v is not in vCenter's form", vm["vm"])
		}
	}
	var want []string
	for _, vm := range tl.state(t).VMs {
		want = append(want, vm.Name)
	}
	sort.Strings(names)
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("VM.list names %v, the lab holds %v", names, want)
	}
	on := summaries(t, tl.rpc(t, "com.vmware.vcenter.VM", "list", vmFilter(map[string]interface{}{
		"power_states": []string{"POWERED_ON"}}), sessionCtx(session)))
	if len(on) != 1 || on[0]["name"] != "vm-3" || on[0]["power_state"] != "POWERED_ON" {
		t.Fatalf("powered-on VMs: %v", on)
	}
	named := summaries(t, tl.rpc(t, "com.vmware.vcenter.VM", "list", vmFilter(map[string]interface{}{
		"names": []string{"vm-1"}}), sessionCtx(session)))
	memory := named[0]["memory_size_MiB"].(map[string]interface{})["OPTIONAL"]
	if len(named) != 1 || memory != float64(8192) {
		t.Fatalf("VM.list by name: %v", named)
	}
}

func TestVapiErrorsAreStandardErrors(t *testing.T) {
	tl := startLab(t)
	wrong := tl.rpc(t, "com.vmware.cis.session", "create", map[string]interface{}{},
		map[string]interface{}{"schemeId": vapi.SchemeUserPassword, "userName": "lab", "password": "wrong"})
	if kind, name := rpcErrorType(t, wrong); kind != "UNAUTHENTICATED" ||
		name != "com.vmware.vapi.std.errors.unauthenticated" {
		t.Fatalf("wrong password: %v", wrong)
	}
	if kind, _ := rpcErrorType(t, tl.rpc(t, "com.vmware.vcenter.VM", "list", vmFilter(nil), nil)); kind !=
		"UNAUTHENTICATED" {
		t.Fatalf("no security context: %s", kind)
	}
	session := tl.rpcLogin(t)
	if kind, _ := rpcErrorType(t, tl.rpc(t, "com.vmware.vcenter.vm.guest.identity", "get",
		map[string]interface{}{"vm": "vm-999"}, sessionCtx(session))); kind != "NOT_FOUND" {
		t.Fatalf("unknown VM: %s", kind)
	}
	if kind, _ := rpcErrorType(t, tl.rpc(t, "com.vmware.vcenter.nothing", "list", map[string]interface{}{}, sessionCtx(session))); kind !=
		"OPERATION_NOT_FOUND" {
		t.Fatalf("unknown service: %s", kind)
	}
	tl.rpc(t, "com.vmware.cis.session", "delete", map[string]interface{}{}, sessionCtx(session))
	if kind, _ := rpcErrorType(t, tl.rpc(t, "com.vmware.vcenter.VM", "list", vmFilter(nil),
		sessionCtx(session))); kind != "UNAUTHENTICATED" {
		t.Fatalf("after logout: %s", kind)
	}
	parse := tl.rawRPC(t, []byte("{not json"))
	if e, _ := parse["error"].(map[string]interface{}); e["code"] != float64(vapi.RPCParseError) || parse["id"] != nil {
		t.Fatalf("parse error: %v", parse)
	}
}

// A session made by POST /api/session works over JSON-RPC, and ending it there ends it for REST too.
func TestVapiSharesRESTSessions(t *testing.T) {
	tl := startLab(t)
	a := tl.login(t)
	out := tl.rpc(t, "com.vmware.cis.session", "get", map[string]interface{}{}, sessionCtx(a.Session))
	info, ok := vapi.StructFields(out["result"].(map[string]interface{})["output"])
	if !ok || info["user"] != "lab" {
		t.Fatalf("session get: %v", out)
	}
	tl.rpc(t, "com.vmware.cis.session", "delete", map[string]interface{}{}, sessionCtx(a.Session))
	if code := a.Do(http.MethodGet, "/api/session", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("REST session after a JSON-RPC delete: %d", code)
	}
}

func TestVapiRejectsMismatchedOperationHeader(t *testing.T) {
	tl := startLab(t)
	body := []byte(`{"jsonrpc":"2.0","method":"invoke","id":"1","params":{"serviceId":"com.vmware.cis.session",` +
		`"operationId":"get","input":{"STRUCTURE":{"operation-input":{}}},"ctx":{}}}`)
	out := tl.rawRPC(t, body, "vapi-service", "com.vmware.vcenter.VM")
	if e, _ := out["error"].(map[string]interface{}); e["code"] != float64(vapi.RPCInvalidOperation) {
		t.Fatalf("header mismatch: %v", out)
	}
}

func TestVapiInventoryListsFilter(t *testing.T) {
	tl := startLab(t)
	session := tl.rpcLogin(t)
	names := func(service, idField string, spec map[string]interface{}) []string {
		input := map[string]interface{}{"filter": map[string]interface{}{"OPTIONAL": map[string]interface{}{
			"STRUCTURE": map[string]interface{}{service + ".filter_spec": spec}}}}
		var out []string
		for _, s := range summaries(t, tl.rpc(t, service, "list", input, sessionCtx(session))) {
			out = append(out, s["name"].(string))
		}
		sort.Strings(out)
		return out
	}
	if got := names("com.vmware.vcenter.host", "host", map[string]interface{}{
		"standalone": map[string]interface{}{"OPTIONAL": true}}); strings.Join(got, ",") != "esxi-sa" {
		t.Errorf("standalone hosts: %v", got)
	}
	if got := names("com.vmware.vcenter.datacenter", "datacenter", map[string]interface{}{
		"names": map[string]interface{}{"OPTIONAL": []string{"dc"}}}); strings.Join(got, ",") != "dc" {
		t.Errorf("datacenters named dc: %v", got)
	}
	if got := names("com.vmware.vcenter.folder", "folder", map[string]interface{}{
		"type": map[string]interface{}{"OPTIONAL": "VIRTUAL_MACHINE"}}); strings.Join(got, ",") != "vm" {
		t.Errorf("VM folders: %v", got)
	}
	if got := names("com.vmware.vcenter.cluster", "cluster", map[string]interface{}{}); strings.Join(got, ",") !=
		"gpu" {
		t.Errorf("clusters: %v", got)
	}
}
