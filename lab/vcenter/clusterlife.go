package main

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"

	"github.com/vmware/govmomi/simulator"
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

// serveClusterDestroy answers Destroy_Task on a cluster, which the simulator lacks (ManagedEntity.Destroy_Task):
// an empty cluster goes, with its root resource pool. A cluster that still has hosts is refused with
// ResourceInUse; vCenter would take its hosts out of the inventory with it, which the lab does not model.
func (l *Lab) serveClusterDestroy(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != "Destroy_Task" || call.This.Type != "ClusterComputeResource" {
		return false
	}
	cluster, _ := simulator.Map.Get(call.This).(*simulator.ClusterComputeResource)
	if cluster == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	task := simulator.CreateTask(cluster, "destroy", func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		if len(cluster.Host) > 0 {
			return l.taskResult(t, nil, &labFault{fault: &types.ResourceInUse{Type: "ClusterComputeResource",
				Name: cluster.Name}, msg: fmt.Sprintf("The resource '%s' is in use.", cluster.Name)})
		}
		if folder, ok := simulator.Map.Get(*cluster.Parent).(*simulator.Folder); ok {
			simulator.Map.RemoveReference(folder, &folder.ChildEntity, cluster.Self)
		}
		if cluster.ResourcePool != nil {
			simulator.Map.Remove(*cluster.ResourcePool)
		}
		simulator.Map.Remove(cluster.Self)
		kept := l.clusters[:0]
		for _, ref := range l.clusters {
			if ref != cluster.Self {
				kept = append(kept, ref)
			}
		}
		l.clusters = kept
		l.logf("cluster %s destroyed", cluster.Name)
		return nil, nil
	})
	ref := task.Run()
	soaphttp.WriteResponse(w, fmt.Sprintf(`<Destroy_TaskResponse xmlns="urn:vim25"><returnval type="Task">%s</returnval>`+
		`</Destroy_TaskResponse>`, ref.Value))
	return true
}
