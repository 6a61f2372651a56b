package main

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/jsonhttp"
	"vcsim/vapi"
)

// The REST API under /api that the lab serves on the vapi package's router: CIS tasks, the vcenter inventory lists
// and the vLCM subset (vlcm_*.go); JSON-RPC operations of com.vmware.vcenter are in vapi_inventory.go.

// registerREST adds the REST API to the lab's server. The credentials are those SessionManager.Login accepts.
func (l *Lab) registerREST(svc *simulator.Service) {
	rt := vapi.NewRouter(func() (string, string) {
		if svc.Listen == nil || svc.Listen.User == nil {
			return "", ""
		}
		password, _ := svc.Listen.User.Password()
		return svc.Listen.User.Username(), password
	})
	for name, op := range vcenterOperations(l) {
		rt.Register(name, op)
	}
	rt.Add(http.MethodGet, "/api/cis/tasks/{task}", l.getTask)
	rt.Add(http.MethodGet, "/api/vcenter/datacenter", l.listDatacenters)
	rt.Add(http.MethodGet, "/api/vcenter/cluster", l.listClusters)
	rt.Add(http.MethodGet, "/api/vcenter/host", l.listHosts)
	l.vlcm.routes(rt)
	l.rest.Handle("/api", rt) // JSON-RPC
	l.rest.Handle("/api/", rt)
}

// startTask registers a task and runs work in the background; work returns the result or the error. The
// caller holds l.mu; work runs without it and takes it for every change (setProgress does too).
func (l *Lab) startTask(c *vapi.Call, service, operation string, target map[string]string,
	work func(t *vapi.Task) (interface{}, *vapi.Err)) *vapi.Task {
	t := vapi.NewTask(service, operation, target, c.User)
	l.vlcm.tasks[t.ID] = t
	l.background.Add(1)
	go func() {
		defer l.background.Done()
		l.mu.Lock()
		t.Status, t.Started, t.Progress = "RUNNING", time.Now(), operation+" started"
		l.mu.Unlock()
		result, err := work(t)
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Ended = time.Now()
		if err != nil {
			t.Status, t.Err = "FAILED", err
			l.logf("REST task %s.%s failed: %s", service, operation, err.Error())
			return
		}
		t.Status, t.Result, t.Completed, t.Progress = "SUCCEEDED", result, t.Total, operation+" completed"
	}()
	jsonhttp.Write(c.W, http.StatusAccepted, t.ID)
	return t
}

// setProgress records progress; completed only grows, as the API promises.
func (l *Lab) setProgress(t *vapi.Task, completed, total int64, format string, args ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if completed > t.Completed {
		t.Completed = completed
	}
	t.Total = total
	t.Progress = fmt.Sprintf(format, args...)
}

func (l *Lab) getTask(c *vapi.Call) {
	l.mu.Lock()
	t := l.vlcm.tasks[c.Params["task"]]
	var info vapi.TaskInfo
	if t != nil {
		info = t.Info()
	}
	l.mu.Unlock()
	if t == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "There is no task %s.", c.Params["task"]))
		return
	}
	jsonhttp.Write(c.W, http.StatusOK, info)
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
		dc, _ := ancestor(ref, "Datacenter")
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

var connectionStates = map[types.HostSystemConnectionState]string{
	types.HostSystemConnectionStateConnected:     "CONNECTED",
	types.HostSystemConnectionStateDisconnected:  "DISCONNECTED",
	types.HostSystemConnectionStateNotResponding: "NOT_RESPONDING",
}

func (l *Lab) listHosts(c *vapi.Call) {
	names, clusters := vapi.QueryFilter(c, "names"), vapi.QueryFilter(c, "clusters")
	l.mu.Lock()
	out := []map[string]string{}
	for _, h := range l.hosts {
		obj := l.hostObject(h.ref)
		if obj == nil || !names.Allows(obj.Name) {
			continue
		}
		if len(clusters) > 0 && (obj.Parent == nil || !clusters[obj.Parent.Value]) {
			continue
		}
		out = append(out, map[string]string{"host": h.ref.Value, "name": obj.Name,
			"connection_state": connectionStates[obj.Runtime.ConnectionState],
			"power_state":      "POWERED_ON"})
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
	jsonhttp.Write(c.W, http.StatusOK, out)
}
