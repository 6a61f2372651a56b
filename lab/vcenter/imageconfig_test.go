package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// A lab host's image configuration manager (package imageconfig) lists the VIBs of what vLCM records the host runs:
// esx-base at its base image's version and release date, and a driver vLCM remediated the host to, as its depot
// describes it.
func TestImageConfigManagerReadsVLCM(t *testing.T) {
	tl, c, ref := startLabHostManager(t, "configManager.imageConfigManager")
	tl.vlcm.SetRemediationDelay(0)
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)
	if info := a.Task(http.MethodPost, base+"?action=apply&vmw-task=true",
		map[string]interface{}{"accept_eula": true}); info.Status != "SUCCEEDED" {
		t.Fatalf("apply: %s", labtest.ErrorText(info))
	}
	res, err := methods.FetchSoftwarePackages(context.Background(), c.Client, &types.FetchSoftwarePackages{This: ref})
	if err != nil {
		t.Fatal(err)
	}
	installed := tl.state(t).Hosts[0].Components
	listed := map[string]types.SoftwarePackage{}
	for _, p := range res.Returnval {
		listed[p.Name] = p
	}
	if p := listed["esx-base"]; p.Version == "" || p.Version != installed["ESXi"] || p.CreationDate == nil {
		t.Errorf("esx-base at %q not listed with its release date: %+v", installed["ESXi"], p)
	}
	if p := listed[driver]; installed[driver] != version || p.Version != version {
		t.Errorf("the driver at %s not listed: %+v (host runs %v)", version, p, installed)
	}
}
