package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/soaphttp"
	"vcsim/topology"
	"vcsim/vimfault"
)

func init() { hookedMethods["CreateVM_Task"] = true }

// createVMTask refuses what vCenter refuses before it makes anything: a guest id that is not one of
// VirtualMachineGuestOsIdentifier's values fails the task with InvalidArgument on configSpec.guestId ("A specified
// parameter was not correct: configSpec.guestId", which community.vmware's vmware_guest target expects from vCenter;
// the reference's fault list for CreateVM_Task was not checked). Valid ids are those the simulator's environment
// browser lists (simulator.GuestID).
func (l *Lab) createVMTask(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	if req, ok := l.inflight.(*types.CreateVM_Task); ok && req.Config.GuestId != "" && !topology.KnownGuestID(req.Config.GuestId) {
		return l.taskResult(t, nil, vimfault.InvalidArgument("configSpec.guestId", "%s is not a guest OS identifier",
			req.Config.GuestId))
	}
	result, fault := newVMToolsRecord(t, original)
	if req, ok := l.inflight.(*types.CreateVM_Task); ok && fault == nil {
		if ref, isRef := result.(types.ManagedObjectReference); isRef {
			if vm, isVM := simulator.Map.Get(ref).(*simulator.VirtualMachine); isVM {
				l.applySpecExtras(vm, &req.Config)
			}
		}
	}
	return result, fault
}

// applySpecExtras applies the ConfigSpec fields the simulator ignores, on create and reconfigure, so that a client
// reading config back sees what it set: maxMksConnections (the remote console limit) and the vApp properties.
func (l *Lab) applySpecExtras(vm *simulator.VirtualMachine, spec *types.VirtualMachineConfigSpec) {
	if spec.MaxMksConnections != 0 {
		vm.Config.MaxMksConnections = spec.MaxMksConnections
		l.update(vm, types.PropertyChange{Name: "config.maxMksConnections", Val: spec.MaxMksConnections})
	}
	if vapp, ok := spec.VAppConfig.(*types.VmConfigSpec); ok && len(vapp.Property) > 0 {
		info, _ := vm.Config.VAppConfig.(*types.VmConfigInfo)
		if info == nil {
			info = &types.VmConfigInfo{}
		}
		info.Property = vappProperties(info.Property, vapp.Property)
		vm.Config.VAppConfig = info
		l.update(vm, types.PropertyChange{Name: "config.vAppConfig", Val: info})
	}
}

// vappProperties applies VmConfigSpec.property's array updates (add, edit by key, remove by removeKey).
func vappProperties(current []types.VAppPropertyInfo, updates []types.VAppPropertySpec) []types.VAppPropertyInfo {
	out := append([]types.VAppPropertyInfo(nil), current...)
	for _, u := range updates {
		switch u.Operation {
		case types.ArrayUpdateOperationAdd:
			if u.Info != nil {
				out = append(out, *u.Info)
			}
		case types.ArrayUpdateOperationEdit:
			for i := range out {
				if u.Info != nil && out[i].Key == u.Info.Key {
					out[i] = *u.Info
				}
			}
		case types.ArrayUpdateOperationRemove:
			kept := out[:0]
			for _, p := range out {
				if key, ok := intKey(u.RemoveKey); !ok || p.Key != key {
					kept = append(kept, p)
				}
			}
			out = kept
		}
	}
	return out
}

// intKey reads an array update's removeKey, which clients send as xsd:int, xsd:short or xsd:long.
func intKey(v types.AnyType) (int32, bool) {
	switch k := v.(type) {
	case int32:
		return k, true
	case int64:
		return int32(k), true
	case int16:
		return int32(k), true
	case int:
		return int32(k), true
	}
	return 0, false
}

// escapeNewVMPath gives CreateVM_Task the datastore path vCenter makes for a VM whose name holds '/', '\' or '%' and
// whose spec names only the datastore: the folder and files take the name with those characters escaped as in the
// inventory ("test_vm%5c%2f%25/test_vm%5c%2f%25.vmx"; the escaping of file names was not checked against a vCenter).
// The simulator would make a directory of the raw name, where '/' is a path separator, and fail inside the task.
// It rewrites the request body, which the simulator decodes on its own.
func (l *Lab) escapeNewVMPath(r *http.Request, call soaphttp.Call, body []byte) {
	req, ok := l.inflight.(*types.CreateVM_Task)
	if call.Method != "CreateVM_Task" || !ok || req.Config.Files == nil {
		return
	}
	var p object.DatastorePath
	escaped := simobj.EscapeName(req.Config.Name)
	if !p.FromString(req.Config.Files.VmPathName) || p.Path != "" || escaped == req.Config.Name {
		return
	}
	var text bytes.Buffer
	_ = xml.EscapeText(&text, []byte(req.Config.Files.VmPathName))
	element := regexp.MustCompile(`(<(?:\w+:)?vmPathName[^>]*>)\s*` + regexp.QuoteMeta(text.String()) +
		`\s*(</(?:\w+:)?vmPathName>)`)
	path := p.String() + " " + escaped + "/" + escaped + ".vmx"
	text.Reset()
	_ = xml.EscapeText(&text, []byte(path))
	rewritten := element.ReplaceAll(body, []byte("${1}"+strings.ReplaceAll(text.String(), "$", "$$")+"${2}"))
	r.Body = io.NopCloser(bytes.NewReader(rewritten))
	r.ContentLength = int64(len(rewritten))
}
