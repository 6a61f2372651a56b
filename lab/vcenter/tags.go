package main

import (
	"fmt"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/tagging"
	"vcsim/topology"
)

// The tagging service (package tagging) as the lab serves it: objects are the simulator's inventory, the topology's
// tags of hosts and VMs are attached at start.

// taggingLab is the lab as the tagging service sees it.
type taggingLab struct{ *Lab }

func (l taggingLab) Lock()   { l.mu.Lock() }
func (l taggingLab) Unlock() { l.mu.Unlock() }

func (l taggingLab) Exists(kind, id string) bool {
	return simobj.Entity(types.ManagedObjectReference{Type: kind, Value: id}) != nil
}

// seedTags makes the tagging service and attaches the topology's tags to its hosts and VMs.
func (l *Lab) seedTags(topo *topology.Topology) error {
	l.tagging = tagging.New(taggingLab{l})
	hosts, vms := map[string]string{}, map[string]string{}
	for _, h := range l.hosts {
		hosts[name(h.Ref)] = h.Ref.Value
	}
	for _, ref := range l.vms {
		vms[name(ref)] = ref.Value
	}
	seed := func(kind, label string, ids map[string]string, tags []string) error {
		for _, tag := range tags {
			if err := l.tagging.Seed(tag, tagging.ObjectID{Type: kind, ID: ids[label]}); err != nil {
				return fmt.Errorf("%s %s: %v", kind, label, err)
			}
		}
		return nil
	}
	for _, dc := range topo.Datacenters {
		for _, h := range dc.AllHosts() {
			if err := seed("HostSystem", h.Name, hosts, h.Tags); err != nil {
				return err
			}
		}
		for _, vm := range dc.VMs {
			if err := seed("VirtualMachine", vm.Name, vms, vm.Tags); err != nil {
				return err
			}
		}
	}
	return nil
}
