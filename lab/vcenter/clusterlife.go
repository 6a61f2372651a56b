package main

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

var createdCluster = regexp.MustCompile(`<returnval type="ClusterComputeResource">([^<]+)</returnval>`)

// rekeyCreatedCluster gives a cluster created with CreateClusterEx vCenter's id form (domain-c<n>) instead of the
// simulator's type-named one, and answers with it.
func (l *Lab) rekeyCreatedCluster(rec *soaphttp.Recorder, call soaphttp.Call) {
	if call.Method != "CreateClusterEx" {
		return
	}
	m := createdCluster.FindSubmatch(rec.Body.Bytes())
	if m == nil || bytes.HasPrefix(m[1], []byte("domain-c")) {
		return
	}
	next := rekey(types.ManagedObjectReference{Type: "ClusterComputeResource", Value: string(m[1])}, "domain-c")
	body := bytes.Replace(rec.Body.Bytes(), m[0], []byte(fmt.Sprintf(
		`<returnval type="ClusterComputeResource">%s</returnval>`, next.Value)), 1)
	rec.Body.Reset()
	rec.Body.Write(body)
}
