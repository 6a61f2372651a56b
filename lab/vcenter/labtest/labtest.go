// Package labtest holds what the lab's Go tests share: the sample catalog of testdata/, files written for a test
// and offline bundles.
// Only tests import it.
package labtest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"vcsim/catalog"
	"vcsim/topology"
)

// SampleCatalog is the path of the catalog the tests use (testdata/catalog-sample.json of lab/vcenter).
var SampleCatalog = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "catalog-sample.json")
}()

// Catalog loads the sample catalog.
func Catalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Load(SampleCatalog)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// WriteFile writes content to a file of that name in the test's temporary directory and answers its path.
func WriteFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Topology loads a topology document against the sample catalog.
func Topology(t *testing.T, doc string) (*topology.Topology, error) {
	t.Helper()
	return topology.Load(WriteFile(t, "topology.json", doc), Catalog(t))
}

// ZipOf builds a zip archive from name -> content.
func ZipOf(t *testing.T, files map[string][]byte) []byte {
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

// BulletinXML is the bulletin of a component in an offline bundle's metadata.
func BulletinXML(name, version string) string {
	return fmt.Sprintf(`<bulletin><id>%[1]s_%[2]s</id><vendor>NVIDIA</vendor><summary>%[1]s driver</summary>
<category>BugFix</category><urgency>Critical</urgency><releaseDate>2023-03-28T00:00:00</releaseDate>
<vibList><vibID>NVD_bootbank_%[1]s_%[2]s</vibID></vibList>
<componentNameSpec name="%[1]s" uiString="%[1]s display"/><componentVersionSpec version="%[2]s" uiString="v%[2]s"/>
</bulletin>`, name, version)
}

// BundleIndex and BundleVendorIndex are the index files of an offline bundle with one vendor, NVIDIA.
const BundleIndex = `<vendorList><vendor><name>NVIDIA</name><code>NVD</code><indexfile>vendor-index.xml</indexfile>
<relativePath></relativePath></vendor></vendorList>`

const BundleVendorIndex = `<vendor><metadata><productId>embeddedEsx</productId><url>metadata.zip</url></metadata></vendor>`

// Bundle is an offline bundle in the real layout holding the given component=version pairs.
func Bundle(t *testing.T, components ...string) []byte {
	t.Helper()
	var bulletins strings.Builder
	for _, c := range components {
		parts := strings.SplitN(c, "=", 2)
		bulletins.WriteString(BulletinXML(parts[0], parts[1]))
	}
	meta := ZipOf(t, map[string][]byte{
		"vmware.xml":       []byte("<metadataResponse><version>3.0</version>" + bulletins.String() + "</metadataResponse>"),
		"vendor-index.xml": []byte(BundleVendorIndex),
	})
	return ZipOf(t, map[string][]byte{"index.xml": []byte(BundleIndex), "vendor-index.xml": []byte(BundleVendorIndex),
		"metadata.zip": meta, "vib20/x/x.vib": []byte("!<arch>\n")})
}
