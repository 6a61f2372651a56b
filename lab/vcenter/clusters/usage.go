package clusters

import (
	"encoding/xml"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// serveResourceUsage answers ClusterComputeResource.GetResourceUsage, which the simulator lacks (vSphere Web
// Services API, since 6.0: a ClusterResourceUsageSummary with the cluster's CPU, memory and storage use and
// capacity). Capacity and use are the sums over the cluster's connected hosts and its datastores.
func serveResourceUsage(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != "GetResourceUsage" || call.This.Type != "ClusterComputeResource" {
		return false
	}
	cluster, _ := simulator.Map.Get(call.This).(*simulator.ClusterComputeResource)
	if cluster == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	usage := types.ClusterResourceUsageSummary{}
	for _, ref := range cluster.Host {
		host := hostObject(ref)
		if host == nil || host.Runtime.ConnectionState != types.HostSystemConnectionStateConnected {
			continue
		}
		if hw := host.Summary.Hardware; hw != nil {
			usage.CpuCapacityMHz += hw.CpuMhz * int32(hw.NumCpuCores)
			usage.MemCapacityMB += int32(hw.MemorySize >> 20)
		}
		usage.CpuUsedMHz += host.Summary.QuickStats.OverallCpuUsage
		usage.MemUsedMB += host.Summary.QuickStats.OverallMemoryUsage
	}
	datastores := map[types.ManagedObjectReference]bool{}
	for _, ref := range cluster.Host {
		if host := hostObject(ref); host != nil {
			for _, ds := range host.Datastore {
				datastores[ds] = true
			}
		}
	}
	for ref := range datastores {
		if ds, ok := simulator.Map.Get(ref).(*simulator.Datastore); ok {
			usage.StorageCapacityMB += ds.Summary.Capacity >> 20
			usage.StorageUsedMB += (ds.Summary.Capacity - ds.Summary.FreeSpace) >> 20
		}
	}
	body, err := xml.Marshal(struct {
		XMLName   xml.Name                          `xml:"urn:vim25 GetResourceUsageResponse"`
		Returnval types.ClusterResourceUsageSummary `xml:"returnval"`
	}{Returnval: usage})
	if err != nil {
		soaphttp.WriteSystemError(w, err.Error())
		return true
	}
	soaphttp.WriteResponse(w, string(body))
	return true
}

func hostObject(ref types.ManagedObjectReference) *simulator.HostSystem {
	h, _ := simulator.Map.Get(ref).(*simulator.HostSystem)
	return h
}
