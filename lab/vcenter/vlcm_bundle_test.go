package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// zipOf builds a zip archive from name -> content.
func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, data := range files {
		f, err := w.Create(name)
		if err == nil {
			_, err = f.Write(data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func bulletinXML(name, version string) string {
	return fmt.Sprintf(`<bulletin><id>%[1]s_%[2]s</id><vendor>NVIDIA</vendor><summary>%[1]s driver</summary>
<category>BugFix</category><urgency>Critical</urgency><releaseDate>2023-03-28T00:00:00</releaseDate>
<vibList><vibID>NVD_bootbank_%[1]s_%[2]s</vibID></vibList>
<componentNameSpec name="%[1]s" uiString="%[1]s display"/><componentVersionSpec version="%[2]s" uiString="v%[2]s"/>
</bulletin>`, name, version)
}

const testIndex = `<vendorList><vendor><name>NVIDIA</name><code>NVD</code><indexfile>vendor-index.xml</indexfile>
<relativePath></relativePath></vendor></vendorList>`

const testVendorIndex = `<vendor><metadata><productId>embeddedEsx</productId><url>metadata.zip</url></metadata></vendor>`

// testBundle is an offline bundle in the real layout holding the given component=version pairs.
func testBundle(t *testing.T, components ...string) []byte {
	t.Helper()
	var bulletins strings.Builder
	for _, c := range components {
		parts := strings.SplitN(c, "=", 2)
		bulletins.WriteString(bulletinXML(parts[0], parts[1]))
	}
	meta := zipOf(t, map[string][]byte{
		"vmware.xml":       []byte("<metadataResponse><version>3.0</version>" + bulletins.String() + "</metadataResponse>"),
		"vendor-index.xml": []byte(testVendorIndex),
	})
	return zipOf(t, map[string][]byte{"index.xml": []byte(testIndex), "vendor-index.xml": []byte(testVendorIndex),
		"metadata.zip": meta, "vib20/x/x.vib": []byte("!<arch>\n")})
}

func TestParseBundle(t *testing.T) {
	b, err := parseBundle(testBundle(t, "NVD-VGPU-800=525.105.14-1OEM.800.1.0.20613240", "nvd-gpu-mgmt-daemon=525.105.14-0.0.0000"))
	if err != nil {
		t.Fatal(err)
	}
	got := b.components()
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
	meta := zipOf(t, map[string][]byte{
		"bulletins/a.xml": []byte(bulletinXML("A", "1.0")),
		"bulletins/b.xml": []byte("<bulletin><id>legacy</id></bulletin>"), // no component: not listed
	})
	data := zipOf(t, map[string][]byte{"index.xml": []byte(`<vendorList><vendor><name>V</name>
		<indexfile>idx.xml</indexfile><relativePath>sub</relativePath></vendor></vendorList>`),
		"sub/idx.xml": []byte(`<vendor><metadata><url>meta/m.zip</url></metadata></vendor>`), "sub/meta/m.zip": meta})
	b, err := parseBundle(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.components(); len(got) != 1 || got[0].Name != "A" || b.Metadata[0].File != "m.zip" {
		t.Errorf("components: %+v", got)
	}
}

func TestParseBundleErrors(t *testing.T) {
	noComponents := zipOf(t, map[string][]byte{"index.xml": []byte(testIndex), "vendor-index.xml": []byte(testVendorIndex),
		"metadata.zip": zipOf(t, map[string][]byte{"vmware.xml": []byte("<metadataResponse/>")})})
	cases := map[string]struct {
		data []byte
		want string
	}{
		"not a zip":        {[]byte("PK\x03\x04 this is not really a zip"), "not a zip archive"},
		"no index":         {zipOf(t, map[string][]byte{"readme.txt": []byte("x")}), "index.xml, named by the bundle, is missing"},
		"bad index":        {zipOf(t, map[string][]byte{"index.xml": []byte("<vendorList><vendor>")}), "index.xml is not valid XML"},
		"no vendor index":  {zipOf(t, map[string][]byte{"index.xml": []byte(testIndex)}), "vendor-index.xml, named by index.xml, is missing"},
		"no metadata":      {zipOf(t, map[string][]byte{"index.xml": []byte(testIndex), "vendor-index.xml": []byte(testVendorIndex)}), "metadata.zip, named by vendor-index.xml, is missing"},
		"metadata not zip": {zipOf(t, map[string][]byte{"index.xml": []byte(testIndex), "vendor-index.xml": []byte(testVendorIndex), "metadata.zip": []byte("x")}), "metadata.zip is not a zip archive"},
		"no components":    {noComponents, "holds no component"},
	}
	for label, tc := range cases {
		if _, err := parseBundle(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", label, err, tc.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{"525.85.07-1OEM.800.1.0.20613240", "525.105.14-1OEM.800.1.0.20613240",
		"525.105.14-1OEM.800.1.0.20613241", "535.54.06-1OEM.800.1.0.20613240", "535.54.06a"}
	for i := 0; i+1 < len(ordered); i++ {
		if compareVersions(ordered[i], ordered[i+1]) >= 0 || compareVersions(ordered[i+1], ordered[i]) <= 0 {
			t.Errorf("%s should sort before %s", ordered[i], ordered[i+1])
		}
	}
	if compareVersions("8.0.2-0.0.22380479", "8.0.2-0.0.22380479") != 0 {
		t.Error("equal versions")
	}
}
