package bundle

import (
	"strings"
	"testing"

	"vcsim/labtest"
)

func TestParseBundle(t *testing.T) {
	b, err := Parse(labtest.Bundle(t, "NVD-VGPU-800=525.105.14-1OEM.800.1.0.20613240", "nvd-gpu-mgmt-daemon=525.105.14-0.0.0000"))
	if err != nil {
		t.Fatal(err)
	}
	got := b.Components()
	if len(got) != 2 || len(b.Metadata) != 1 || b.Metadata[0].Vendor != "NVIDIA" || b.Metadata[0].File != "metadata.zip" {
		t.Fatalf("bundle: %+v", b.Metadata)
	}
	c := got[0]
	if c.Name != "NVD-VGPU-800" || c.Version != "525.105.14-1OEM.800.1.0.20613240" || c.DisplayName != "NVD-VGPU-800 display" ||
		c.DisplayVersion != "v525.105.14-1OEM.800.1.0.20613240" || c.Vendor != "NVIDIA" || c.Category != "BUGFIX" ||
		c.Urgency != "CRITICAL" || c.Bulletin != "NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240" || len(c.Vibs) != 1 {
		t.Errorf("component: %+v", c)
	}
}

func TestParseBundleFromBulletinFiles(t *testing.T) {
	meta := labtest.ZipOf(t, map[string][]byte{
		"bulletins/a.xml": []byte(labtest.BulletinXML("A", "1.0")),
		"bulletins/b.xml": []byte("<bulletin><id>legacy</id></bulletin>"), // no component: not listed
	})
	data := labtest.ZipOf(t, map[string][]byte{"index.xml": []byte(`<vendorList><vendor><name>V</name>
		<indexfile>idx.xml</indexfile><relativePath>sub</relativePath></vendor></vendorList>`),
		"sub/idx.xml": []byte(`<vendor><metadata><url>meta/m.zip</url></metadata></vendor>`), "sub/meta/m.zip": meta})
	b, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Components(); len(got) != 1 || got[0].Name != "A" || b.Metadata[0].File != "m.zip" {
		t.Errorf("components: %+v", got)
	}
}

func TestParseBundleErrors(t *testing.T) {
	noComponents := labtest.ZipOf(t, map[string][]byte{"index.xml": []byte(labtest.BundleIndex), "vendor-index.xml": []byte(labtest.BundleVendorIndex),
		"metadata.zip": labtest.ZipOf(t, map[string][]byte{"vmware.xml": []byte("<metadataResponse/>")})})
	cases := map[string]struct {
		data []byte
		want string
	}{
		"not a zip":        {[]byte("PK\x03\x04 this is not really a zip"), "not a zip archive"},
		"no index":         {labtest.ZipOf(t, map[string][]byte{"readme.txt": []byte("x")}), "index.xml, named by the bundle, is missing"},
		"bad index":        {labtest.ZipOf(t, map[string][]byte{"index.xml": []byte("<vendorList><vendor>")}), "index.xml is not valid XML"},
		"no vendor index":  {labtest.ZipOf(t, map[string][]byte{"index.xml": []byte(labtest.BundleIndex)}), "vendor-index.xml, named by index.xml, is missing"},
		"no metadata":      {labtest.ZipOf(t, map[string][]byte{"index.xml": []byte(labtest.BundleIndex), "vendor-index.xml": []byte(labtest.BundleVendorIndex)}), "metadata.zip, named by vendor-index.xml, is missing"},
		"metadata not zip": {labtest.ZipOf(t, map[string][]byte{"index.xml": []byte(labtest.BundleIndex), "vendor-index.xml": []byte(labtest.BundleVendorIndex), "metadata.zip": []byte("x")}), "metadata.zip is not a zip archive"},
		"no components":    {noComponents, "holds no component"},
	}
	for label, tc := range cases {
		if _, err := Parse(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", label, err, tc.want)
		}
	}
}
