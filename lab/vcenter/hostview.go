package main

import (
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/about"
	"vcsim/hostd"
)

// hostdLab is the lab as the host view (package hostd) sees it: its lock, its hosts by name, their root account.
type hostdLab struct{ *Lab }

func (l hostdLab) Lock()   { l.mu.Lock() }
func (l hostdLab) Unlock() { l.mu.Unlock() }

func (l hostdLab) HostNamed(name string) (types.ManagedObjectReference, bool) {
	for _, h := range l.hosts {
		if strings.ToLower(h.Name) == name {
			return h.Ref, true
		}
	}
	return types.ManagedObjectReference{}, false
}

func (l hostdLab) Login() hostd.Login { return l.hostdLogin }

func (l hostdLab) About(a types.AboutInfo) types.AboutInfo { return about.ESXi(a) }
