package topology_test

import (
	"strings"
	"testing"

	"vcsim/labtest"
)

func TestTopologyDefaultsAndRoundRobin(t *testing.T) {
	topo, err := labtest.Topology(t, `{"datacenters": [{"name": "dc",
		"clusters": [{"name": "c1", "drs": {"enabled": true}, "hosts": [{"name": "h1", "gpus": [{"model": "P40", "count": 2}],
			"bmc": {"vendor": "dell_idrac9", "port": 8441}}, {"name": "h2"}]}],
		"hosts": [{"name": "sa"}],
		"vms": [{"name": "a", "cluster": "c1"}, {"name": "b", "cluster": "c1"}, {"name": "c", "cluster": "c1"},
		        {"name": "d", "host": "sa", "power_state": "poweredOn"}]}],
		"bmc_defaults": {"ignored": "by the vCenter simulator"}}`)
	if err != nil {
		t.Fatal(err)
	}
	dc := topo.Datacenters[0]
	if got := []string{dc.VMs[0].Host, dc.VMs[1].Host, dc.VMs[2].Host}; strings.Join(got, " ") != "h1 h2 h1" {
		t.Errorf("round robin placed VMs on %v", got)
	}
	vm := dc.VMs[0]
	if vm.MemoryMB != 4096 || vm.CPUs != 2 || vm.PowerState != "poweredOff" || vm.GuestID != "otherLinux64Guest" {
		t.Errorf("VM defaults: %+v", vm)
	}
	c := dc.Clusters[0]
	if c.DRS.Behavior != "fullyAutomated" || c.DPM.Enabled || c.DPM.Behavior != "manual" {
		t.Errorf("automation defaults: drs %+v dpm %+v", c.DRS, c.DPM)
	}
}

func TestTopologyErrors(t *testing.T) {
	cases := map[string]struct{ doc, want string }{
		"unknown model": {`{"datacenters": [{"name": "dc", "hosts": [{"name": "h", "gpus": [{"model": "P41", "count": 1}]}]}]}`,
			`unknown GPU model "P41" (the catalog has A100-40, L4, L40S, P40, T4)`},
		"duplicate host across datacenters": {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}]}, {"name": "b", "hosts": [{"name": "h"}]}]}`,
			`duplicate host name "h"`},
		"duplicate VM": {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}], "vms": [{"name": "v", "host": "h"}, {"name": "v", "host": "h"}]}]}`,
			`duplicate VM name "v"`},
		"VM on unknown host": {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}], "vms": [{"name": "v", "host": "x"}]}]}`,
			`VM "v": unknown host "x"`},
		"VM on a host of another datacenter": {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}]}, {"name": "b", "vms": [{"name": "v", "host": "h"}]}]}`,
			`VM "v": unknown host "h" (not in datacenter "b")`},
		"VM without placement": {`{"datacenters": [{"name": "a", "vms": [{"name": "v"}]}]}`, "names neither a host nor a cluster"},
		"host outside the named cluster": {`{"datacenters": [{"name": "a", "clusters": [{"name": "c", "hosts": [{"name": "h"}]}],
			"hosts": [{"name": "s"}], "vms": [{"name": "v", "host": "s", "cluster": "c"}]}]}`, `host "s" is not in cluster "c"`},
		"DRS behavior": {`{"datacenters": [{"name": "a", "clusters": [{"name": "c", "drs": {"enabled": true, "behavior": "auto"}}]}]}`,
			`behavior "auto" is not one of fullyAutomated`},
		"typo in a key":  {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "gpu": []}]}]}`, `unknown field "gpu"`},
		"guest id":       {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}], "vms": [{"name": "v", "host": "h", "guest_id": "ubuntu"}]}]}`, `guest_id "ubuntu"`},
		"firmware":       {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}], "vms": [{"name": "v", "host": "h", "firmware": "uefi"}]}]}`, `firmware "uefi" is not bios or efi`},
		"too many GPUs":  {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "gpus": [{"model": "T4", "count": 15}]}]}]}`, "at most 14 per host"},
		"no datacenters": {`{"hosts": []}`, `no "datacenters"`},
		"ECC word":       {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "gpus": [{"model": "T4", "count": 1, "ecc": "off"}]}]}]}`, `ecc must be enabled or disabled, got "off"`},
		"NVLink index":   {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "gpus": [{"model": "T4", "count": 2}], "nvlink": [[0, 2]]}]}]}`, "GPU index 2 out of range"},
		"physical NICs":  {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "nics": 9}]}]}`, "nics must be between 2 and 8, got 9"},
		"host tag":       {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "tags": ["gpu-tier"]}]}]}`, `host "h": tag "gpu-tier" is not category:tag`},
		"VM tag":         {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}], "vms": [{"name": "v", "host": "h", "tags": ["team:"]}]}]}`, `VM "v": tag "team:" is not category:tag`},
		"guest address":  {`{"datacenters": [{"name": "a", "hosts": [{"name": "h"}], "vms": [{"name": "v", "host": "h", "guest_ip": "10.0.0"}]}]}`, `VM "v": guest_ip "10.0.0" is not an IP address`},
		"NVLink triple":  {`{"datacenters": [{"name": "a", "hosts": [{"name": "h", "gpus": [{"model": "T4", "count": 3}], "nvlink": [[0, 1], [1, 2]]}]}]}`, "GPU 1 is in two NVLink sets"},
	}
	for name, tc := range cases {
		_, err := labtest.Topology(t, tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
}
