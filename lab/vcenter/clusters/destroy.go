package clusters

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// serveClusterDestroy answers Destroy_Task on a cluster, which the simulator lacks (ManagedEntity.Destroy_Task):
// an empty cluster goes, with its root resource pool. A cluster that still has hosts is refused with
// ResourceInUse; vCenter would take its hosts out of the inventory with it, which the lab does not model.
func (c *Clusters) serveClusterDestroy(w http.ResponseWriter, call soaphttp.Call) bool {
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
			return c.lab.TaskFailed(t, &vimfault.Fault{Fault: &types.ResourceInUse{Type: "ClusterComputeResource",
				Name: cluster.Name}, Msg: fmt.Sprintf("The resource '%s' is in use.", cluster.Name)})
		}
		if folder, ok := simulator.Map.Get(*cluster.Parent).(*simulator.Folder); ok {
			simulator.Map.RemoveReference(folder, &folder.ChildEntity, cluster.Self)
		}
		if cluster.ResourcePool != nil {
			simulator.Map.Remove(*cluster.ResourcePool)
		}
		simulator.Map.Remove(cluster.Self)
		c.lab.ClusterDestroyed(cluster.Self)
		c.lab.Logf("cluster %s destroyed", cluster.Name)
		return nil, nil
	})
	ref := task.Run()
	soaphttp.WriteResponse(w, fmt.Sprintf(`<Destroy_TaskResponse xmlns="urn:vim25"><returnval type="Task">%s</returnval>`+
		`</Destroy_TaskResponse>`, ref.Value))
	return true
}
