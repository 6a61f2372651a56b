package catalog_test

import (
	"reflect"
	"strings"
	"testing"

	"vcsim/catalog"
	"vcsim/labtest"
)

func TestSampleCatalog(t *testing.T) {
	c := labtest.Catalog(t)
	for model, profiles := range map[string]int{"P40": 25, "T4": 17, "A100-40": 13, "L40S": 30, "L4": 23} {
		if got := len(c.GPUs[model].Profiles); got != profiles {
			t.Errorf("%s: %d profiles, want %d", model, got, profiles)
		}
	}
	p := c.Profile("grid_a100-3-20c")
	if p == nil || p.Sharing != "mig" || p.MaxPerGPU != 2 || c.GPUs["A100-40"].Supports(p.Name) != p {
		t.Errorf("grid_a100-3-20c: %+v", p)
	}
	if p := c.Profile("grid_l40s-8c"); p == nil || !reflect.DeepEqual(p.Placements, []int64{0, 16, 24, 40}) {
		t.Errorf("grid_l40s-8c mixed-size placements: %+v", p)
	}
	if p := c.Profile("grid_p40-8q"); p == nil || p.MaxPerGPU != 3 || c.GPUs["P40"].Supports(p.Name) != p || c.GPUs["P40"].DeviceID != 0x1b38 {
		t.Errorf("grid_p40-8q: %+v", p)
	}
	if c.GPUs["T4"].Supports("grid_p40-8q") != nil || c.GPUs["T4"].Supports("grid_t4-4c") == nil {
		t.Error("T4 profile support is wrong")
	}
}

func TestCatalogErrors(t *testing.T) {
	profile := `{"name": "grid_x-8q", "framebuffer_mib": 8192, "series": "Q", "max_per_gpu": 3, "sharing": "timeSliced", "profile_class": "quadro"}`
	model := func(deviceID, sharing, extra string) string {
		p := strings.Replace(profile, "timeSliced", sharing, 1)
		return `{"device_name": "X", "pci_device_id": "` + deviceID + `", "framebuffer_mib": 24576, "profiles": [` + p + `]` + extra + `}`
	}
	cases := map[string]struct{ doc, want string }{
		"empty":          {`{"gpus": {}}`, "no GPU models"},
		"device id":      {`{"gpus": {"X": ` + model("1b38", "timeSliced", "") + `}}`, `pci_device_id "1b38"`},
		"sharing":        {`{"gpus": {"X": ` + model("0x1b38", "shared", "") + `}}`, `sharing "shared"`},
		"duplicate":      {`{"gpus": {"X": ` + model("0x1b38", "timeSliced", "") + `, "Y": ` + model("0x1b39", "timeSliced", "") + `}}`, "grid_x-8q is also listed for X"},
		"no profiles":    {`{"gpus": {"X": {"device_name": "X", "pci_device_id": "0x1", "framebuffer_mib": 1}}}`, "no vGPU profiles"},
		"not json":       {`{"gpus": [}`, "invalid character"},
		"unknown fields": {`{"gpus": {"X": ` + model("0x1b38", "timeSliced", `, "gpus_per_board": 4, "notes": "kept"`) + `}}`, ""},
	}
	for name, tc := range cases {
		_, err := catalog.Load(labtest.WriteFile(t, "catalog.json", tc.doc))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
}
