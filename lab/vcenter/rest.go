package main

import (
	"net/http"
	"sort"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"

	"vcsim/jsonhttp"
	"vcsim/simobj"
	"vcsim/vapi"
	"vcsim/vcenterapi"
)

// The REST API under /api that the lab serves on the vapi package's router: CIS tasks, the vcenter inventory lists
// and the vLCM subset (package vlcm); JSON-RPC operations of com.vmware.vcenter are package vcenterapi's.

// vcenterapiLab is the lab as the inventory services of the Automation API (package vcenterapi) see it.
type vcenterapiLab struct{ *Lab }

func (l vcenterapiLab) Lock()   { l.mu.Lock() }
func (l vcenterapiLab) Unlock() { l.mu.Unlock() }

func (l vcenterapiLab) VM(e mo.Entity) *simulator.VirtualMachine {
	switch v := e.(type) {
	case *labVM:
		return &v.VirtualMachine
	case *simulator.VirtualMachine:
		return v
	}
	return nil
}

// registerREST adds the REST API to the lab's server. The credentials are those SessionManager.Login accepts.
func (l *Lab) registerREST(svc *simulator.Service) {
	rt := vapi.NewRouter(func() (string, string) {
		if svc.Listen == nil || svc.Listen.User == nil {
			return "", ""
		}
		password, _ := svc.Listen.User.Password()
		return svc.Listen.User.Username(), password
	})
	for name, op := range vcenterapi.Operations(vcenterapiLab{l}) {
		rt.Register(name, op)
	}
	for name, op := range l.tagging.Operations() {
		rt.Register(name, op)
	}
	l.tagging.Routes(rt)
	rt.Add(http.MethodGet, "/api/cis/tasks/{task}", l.tasks.Serve)
	rt.Add(http.MethodPost, "/api/cis/tasks?action=list", l.tasks.List)
	rt.Add(http.MethodGet, "/api/vcenter/datacenter", l.listDatacenters)
	rt.Add(http.MethodGet, "/api/vcenter/cluster", l.listClusters)
	rt.Add(http.MethodGet, "/api/vcenter/host", l.listHosts)
	l.vlcm.Routes(rt)
	l.rest.Handle("/api", rt) // JSON-RPC
	l.rest.Handle("/api/", rt)
}

func (l *Lab) listDatacenters(c *vapi.Call) {
	names := vapi.QueryFilter(c, "names")
	l.mu.Lock()
	out := []map[string]string{}
	for _, ref := range l.datacenters {
		if n := name(ref); names.Allows(n) {
			out = append(out, map[string]string{"datacenter": ref.Value, "name": n})
		}
	}
	l.mu.Unlock()
	jsonhttp.Write(c.W, http.StatusOK, out)
}

func (l *Lab) listClusters(c *vapi.Call) {
	names, datacenters := vapi.QueryFilter(c, "names"), vapi.QueryFilter(c, "datacenters")
	l.mu.Lock()
	out := []map[string]interface{}{}
	for _, ref := range l.clusters {
		cluster, ok := simulator.Map.Get(ref).(*simulator.ClusterComputeResource)
		dc, _ := simobj.Ancestor(ref, "Datacenter")
		if !ok || !names.Allows(cluster.Name) || !datacenters.Allows(dc.Value) {
			continue
		}
		j := clusterState(cluster)
		out = append(out, map[string]interface{}{"cluster": ref.Value, "name": cluster.Name,
			"drs_enabled": j.DRS.Enabled, "ha_enabled": false})
	}
	l.mu.Unlock()
	jsonhttp.Write(c.W, http.StatusOK, out)
}

func (l *Lab) listHosts(c *vapi.Call) {
	names, clusters := vapi.QueryFilter(c, "names"), vapi.QueryFilter(c, "clusters")
	l.mu.Lock()
	out := []map[string]string{}
	for _, h := range l.hosts {
		obj := l.hostObject(h.Ref)
		if obj == nil || !names.Allows(obj.Name) {
			continue
		}
		if len(clusters) > 0 && (obj.Parent == nil || !clusters[obj.Parent.Value]) {
			continue
		}
		out = append(out, map[string]string{"host": h.Ref.Value, "name": obj.Name,
			"connection_state": vcenterapi.ConnectionStates[obj.Runtime.ConnectionState],
			"power_state":      "POWERED_ON"})
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
	jsonhttp.Write(c.W, http.StatusOK, out)
}
