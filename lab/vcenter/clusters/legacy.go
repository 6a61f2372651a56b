package clusters

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// serveReconfigureCluster is ClusterComputeResource.ReconfigureCluster_Task, the older form of
// ReconfigureComputeResource_Task (deprecated since vSphere 2.5, still served and still called by clients such as
// community.vmware's DRS rule modules), which the simulator does not implement: its ClusterConfigSpec is the
// HA, DRS, per-VM and rules part of a ClusterConfigSpecEx, applied by the same rules.
func (c *Clusters) serveReconfigureCluster(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	if call.Method != "ReconfigureCluster_Task" || call.This.Type != "ClusterComputeResource" {
		return false
	}
	method, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return false
	}
	req, ok := method.Body.(*types.ReconfigureCluster_Task)
	cluster, found := simulator.Map.Get(call.This).(*simulator.ClusterComputeResource)
	if !ok || !found {
		return false
	}
	converted := &types.ReconfigureComputeResource_Task{This: req.This, Modify: req.Modify,
		Spec: &types.ClusterConfigSpecEx{DasConfig: req.Spec.DasConfig, DasVmConfigSpec: req.Spec.DasVmConfigSpec,
			DrsConfig: req.Spec.DrsConfig, DrsVmConfigSpec: req.Spec.DrsVmConfigSpec, RulesSpec: req.Spec.RulesSpec}}
	c.lab.SetInflight(converted)
	res := cluster.ReconfigureComputeResourceTask(converted).(*methods.ReconfigureComputeResource_TaskBody)
	soaphttp.WriteResponse(w, fmt.Sprintf(`<ReconfigureCluster_TaskResponse xmlns="urn:vim25"><returnval type="Task">%s`+
		`</returnval></ReconfigureCluster_TaskResponse>`, res.Res.Returnval.Value))
	return true
}
