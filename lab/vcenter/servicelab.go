package main

import (
	"github.com/vmware/govmomi/vim25/types"
)

// servicesLab is the lab as the hosts' service systems see it (hostservices.Lab): an Xorg (re)start applies the
// host's graphics configuration to its GPUs.
type servicesLab struct{ labView }

func (s servicesLab) XorgStarted(ref types.ManagedObjectReference) {
	h := s.l.hostByRef[ref]
	if h == nil {
		return
	}
	h.xorgRestarts++
	s.l.logf("host %s: Xorg restarted (%d)", h.Name, h.xorgRestarts)
	h.ApplyConfig()
	h.publish()
}
