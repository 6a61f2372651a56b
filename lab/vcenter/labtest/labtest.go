// Package labtest holds what the lab's Go tests share: the sample catalog of testdata/ and files written for a test.
// Only tests import it.
package labtest

import (
	"os"
	"path/filepath"
	"runtime"
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
