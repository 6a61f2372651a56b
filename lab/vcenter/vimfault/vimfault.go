// Package vimfault holds the vSphere faults the lab's extensions answer: a fault with the localized message a
// client shows, and vCenter's InvalidArgument with its wording.
package vimfault

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// Fault is a vSphere fault with the localized message a client shows.
type Fault struct {
	Fault types.BaseMethodFault
	Msg   string
}

func (f *Fault) Error() string { return f.Msg }

// SOAP is the fault as a method's answer carries it.
func (f *Fault) SOAP() *soap.Fault { return simulator.Fault(f.Msg, f.Fault) }

// InvalidArgument is vCenter's InvalidArgument, with its wording and the reason appended.
func InvalidArgument(property, format string, args ...interface{}) *Fault {
	return &Fault{
		Fault: &types.InvalidArgument{InvalidProperty: property},
		Msg:   fmt.Sprintf("A specified parameter was not correct: %s (%s)", property, fmt.Sprintf(format, args...)),
	}
}
