package datastores

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// Datastore maintenance mode, which the simulator lacks (vSphere Web Services API, Datastore.
// DatastoreEnterMaintenanceMode, DatastoreExitMaintenanceMode_Task, StoragePlacementResult, DatastoreSummary.
// maintenanceMode; developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.Datastore.html):
//   - DatastoreEnterMaintenanceMode answers a StoragePlacementResult whose task puts the datastore in maintenance
//     (summary.maintenanceMode inMaintenance); a datastore already in maintenance is refused with InvalidState;
//   - DatastoreExitMaintenanceMode_Task returns it to normal; one not in maintenance is refused with InvalidState.
//
// The lab has no Storage DRS to move VMs off a datastore: entering maintenance on a datastore that still holds VMs
// fails its task with InvalidState naming them, where vCenter would leave the datastore entering maintenance until
// they are moved (not modelled).
func (d *Datastores) serveDatastoreMaintenance(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.This.Type != "Datastore" || (call.Method != "DatastoreEnterMaintenanceMode" &&
		call.Method != "DatastoreExitMaintenanceMode_Task") {
		return false
	}
	ds, _ := simulator.Map.Get(call.This).(*simulator.Datastore)
	if ds == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	inMaintenance := ds.Summary.MaintenanceMode == string(types.DatastoreSummaryMaintenanceModeStateInMaintenance)
	if call.Method == "DatastoreExitMaintenanceMode_Task" {
		if !inMaintenance {
			soaphttp.WriteFault(w, "The operation is not allowed in the current state.", "InvalidState", "")
			return true
		}
		ref := d.lab.RunTask(ds, "exitMaintenanceMode", func() (types.BaseMethodFault, string) {
			d.setDatastoreMaintenance(ds, types.DatastoreSummaryMaintenanceModeStateNormal)
			return nil, ""
		})
		soaphttp.WriteResponse(w, fmt.Sprintf(`<DatastoreExitMaintenanceMode_TaskResponse xmlns="urn:vim25"><returnval `+
			`type="Task">%s</returnval></DatastoreExitMaintenanceMode_TaskResponse>`, ref.Value))
		return true
	}
	if inMaintenance {
		soaphttp.WriteFault(w, "The operation is not allowed in the current state.", "InvalidState", "")
		return true
	}
	ref := d.lab.RunTask(ds, "enterMaintenanceMode", func() (types.BaseMethodFault, string) {
		if len(ds.Vm) > 0 {
			return &types.InvalidState{}, fmt.Sprintf("Datastore '%s' still holds %d virtual machines; move them to "+
				"another datastore first.", ds.Name, len(ds.Vm))
		}
		d.setDatastoreMaintenance(ds, types.DatastoreSummaryMaintenanceModeStateInMaintenance)
		return nil, ""
	})
	soaphttp.WriteResponse(w, fmt.Sprintf(`<DatastoreEnterMaintenanceModeResponse xmlns="urn:vim25"><returnval><task `+
		`type="Task">%s</task></returnval></DatastoreEnterMaintenanceModeResponse>`, ref.Value))
	return true
}

func (d *Datastores) setDatastoreMaintenance(ds *simulator.Datastore, state types.DatastoreSummaryMaintenanceModeState) {
	d.lab.Update(ds, types.PropertyChange{Name: "summary.maintenanceMode", Val: string(state)})
	d.lab.Logf("datastore %s: maintenance mode %s", ds.Name, state)
}
