package vcenterapi

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/vapi"
)

// simLab is govmomi's own simulator as the inventory services see a lab: its VMs are the simulator's.
type simLab struct{ sync.Mutex }

func (*simLab) VM(e mo.Entity) *simulator.VirtualMachine {
	vm, _ := e.(*simulator.VirtualMachine)
	return vm
}

// invoke runs an operation on input written as the JSON-RPC request's input, and answers its output as JSON.
func invoke(t *testing.T, operation, input string) ([]byte, *vapi.Err) {
	t.Helper()
	op, ok := Operations(&simLab{})[operation]
	if !ok {
		t.Fatalf("no operation %s", operation)
	}
	c := &vapi.Invocation{Input: map[string]interface{}{}}
	if err := json.Unmarshal([]byte(input), &c.Input); err != nil {
		t.Fatal(err)
	}
	out, err := op(c)
	if err != nil {
		return nil, err
	}
	raw, jerr := json.Marshal(out)
	if jerr != nil {
		t.Fatal(jerr)
	}
	return raw, nil
}

// summaries reads the fields of a list's summary structures.
func summaries(t *testing.T, raw []byte) []map[string]interface{} {
	t.Helper()
	var list []map[string]map[string]map[string]interface{}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	out := []map[string]interface{}{}
	for _, s := range list {
		for _, fields := range s["STRUCTURE"] {
			out = append(out, fields)
		}
	}
	return out
}

// filter is a list operation's input with a filter spec of the given fields (JSON values, wrapped as optionals).
func filter(spec string, fields map[string]string) string {
	parts := []string{}
	for name, value := range fields {
		parts = append(parts, `"`+name+`": {"OPTIONAL": `+value+`}`)
	}
	return `{"filter": {"OPTIONAL": {"STRUCTURE": {"` + spec + `": {` + strings.Join(parts, ", ") + `}}}}}`
}

func names(t *testing.T, raw []byte, field string) string {
	t.Helper()
	list := []string{}
	for _, s := range summaries(t, raw) {
		list = append(list, s[field].(string))
	}
	sort.Strings(list)
	return strings.Join(list, ",")
}

func inventoryNames(kind string) string {
	list := []string{}
	for _, e := range simulator.Map.All(kind) {
		list = append(list, e.Entity().Name)
	}
	sort.Strings(list)
	return strings.Join(list, ",")
}

func TestListsAnswerTheSimulatorsInventory(t *testing.T) {
	labtest.Simulator(t)
	for operation, kind := range map[string]string{"com.vmware.vcenter.VM.list": "VirtualMachine",
		"com.vmware.vcenter.host.list": "HostSystem", "com.vmware.vcenter.cluster.list": "ClusterComputeResource",
		"com.vmware.vcenter.datacenter.list": "Datacenter", "com.vmware.vcenter.datastore.list": "Datastore"} {
		raw, err := invoke(t, operation, `{}`)
		if err != nil {
			t.Fatalf("%s: %+v", operation, err)
		}
		if got, want := names(t, raw, "name"), inventoryNames(kind); got != want || got == "" {
			t.Errorf("%s: %s, the simulator holds %s", operation, got, want)
		}
	}
}

func TestListFilters(t *testing.T) {
	labtest.Simulator(t)
	raw, err := invoke(t, "com.vmware.vcenter.host.list", filter("com.vmware.vcenter.host.filter_spec",
		map[string]string{"standalone": "true"}))
	if err != nil || names(t, raw, "name") != "DC0_H0" {
		t.Errorf("standalone hosts: %s %+v", raw, err)
	}
	raw, err = invoke(t, "com.vmware.vcenter.VM.list", filter("com.vmware.vcenter.VM.filter_spec",
		map[string]string{"names": `["DC0_H0_VM0"]`, "power_states": `["POWERED_ON"]`}))
	if err != nil || names(t, raw, "name") != "DC0_H0_VM0" {
		t.Errorf("VMs by name and power state: %s %+v", raw, err)
	}
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	raw, err = invoke(t, "com.vmware.vcenter.VM.list", filter("com.vmware.vcenter.VM.filter_spec",
		map[string]string{"clusters": `["` + cluster.Self.Value + `"]`}))
	if err != nil || names(t, raw, "name") != "DC0_C0_RP0_VM0" {
		t.Errorf("VMs of the cluster: %s %+v", raw, err)
	}
	if _, err = invoke(t, "com.vmware.vcenter.VM.list", filter("com.vmware.vcenter.VM.filter_spec",
		map[string]string{"names": `"DC0_H0_VM0"`})); err == nil || err.ErrorType != "INVALID_ARGUMENT" {
		t.Errorf("a name that is not a set: %+v", err)
	}
}

func TestClusterSummaryAndGet(t *testing.T) {
	labtest.Simulator(t)
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	cluster.ConfigurationEx.(*types.ClusterConfigInfoEx).DrsConfig.Enabled = types.NewBool(true)
	raw, err := invoke(t, "com.vmware.vcenter.cluster.list", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if list := summaries(t, raw); len(list) != 1 || list[0]["drs_enabled"] != true || list[0]["cluster"] != cluster.Self.Value {
		t.Errorf("clusters: %v", list)
	}
	raw, err = invoke(t, "com.vmware.vcenter.cluster.get", `{"cluster": "`+cluster.Self.Value+`"}`)
	if err != nil || !strings.Contains(string(raw), `"resource_pool":"`+cluster.ResourcePool.Value+`"`) {
		t.Errorf("cluster.get: %s %+v", raw, err)
	}
	if _, err = invoke(t, "com.vmware.vcenter.cluster.get", `{"cluster": "domain-c999"}`); err == nil || err.ErrorType != "NOT_FOUND" {
		t.Errorf("an unknown cluster: %+v", err)
	}
	if _, err = invoke(t, "com.vmware.vcenter.vm.guest.identity.get", `{}`); err == nil || err.ErrorType != "INVALID_ARGUMENT" {
		t.Errorf("guest identity without a VM: %+v", err)
	}
}

func TestGuestOSEnum(t *testing.T) {
	for id, want := range map[string]string{"otherLinux64Guest": "OTHER_LINUX_64",
		"windows9Server64Guest": "WINDOWS_9_SERVER_64", "debian10_64Guest": "DEBIAN_10_64", "ubuntu64Guest": "UBUNTU_64"} {
		if got := guestOSEnum(id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	if got := guestFamilyEnum("linuxGuest"); got != "LINUX" {
		t.Errorf("linuxGuest: %s", got)
	}
}
