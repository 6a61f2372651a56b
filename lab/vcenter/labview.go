package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// labView is what the packages' Lab interfaces share of the lab: property updates, its log and the simulator's
// context. The lab's adapter for each package (clusterlab.go, datastorelab.go, ...) embeds it.
type labView struct{ l *Lab }

func (v labView) Update(obj mo.Reference, changes ...types.PropertyChange) {
	v.l.update(obj, changes...)
}

func (v labView) Logf(format string, args ...interface{}) { v.l.logf(format, args...) }

func (v labView) Context() *simulator.Context { return v.l.ctx }
