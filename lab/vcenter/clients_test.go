package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// The lab serves Fetch with its own property collector (package propcollector): an unset property reads as unset.
func TestFetchAnswersUnsetPropertiesUnset(t *testing.T) {
	tl := startLab(t)
	c := tl.client(t)
	if value, err := labtest.Fetch(t, c.Client.Client, tl.vms[0], "snapshot"); err != nil || value != nil {
		t.Errorf("Fetch snapshot: got %v, %v; want unset", value, err)
	}
}

func TestHostConfigManagers(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	seen := map[types.ManagedObjectReference]bool{}
	for _, h := range tl.hosts {
		var host mo.HostSystem
		if err := object.NewHostSystem(c.Client, h.Ref).Properties(ctx, h.Ref,
			[]string{"configManager", "hardware.pciDevice", "config.pciPassthruInfo"}, &host); err != nil {
			t.Fatal(err)
		}
		cm := host.ConfigManager
		for _, ref := range []*types.ManagedObjectReference{cm.VsanSystem, cm.PciPassthruSystem, cm.CpuScheduler,
			cm.VmotionSystem, cm.HealthStatusSystem, cm.DateTimeSystem, cm.PowerSystem} {
			if ref == nil || seen[*ref] {
				t.Fatalf("host %s: manager %v missing or shared with another host", h.Name, ref)
			}
			seen[*ref] = true
			var content []types.ObjectContent
			if err := property.DefaultCollector(c.Client).Retrieve(ctx, []types.ManagedObjectReference{*ref}, nil,
				&content); err != nil {
				t.Errorf("host %s: %s answers %v", h.Name, ref, err)
			}
		}
		status, err := methods.QueryHostStatus(ctx, c, &types.QueryHostStatus{This: *cm.VsanSystem})
		if err != nil {
			t.Fatal(err)
		}
		if s := status.Returnval; s.Health != "unknown" || s.NodeState.State != "disabled" || s.Uuid != "" {
			t.Errorf("host %s: vSAN status %+v, want a host without vSAN", h.Name, s)
		}

		// The lab's GPUs are among the devices its passthrough system (package pcipassthru) was made with.
		capable := map[string]bool{}
		for _, p := range host.Config.PciPassthruInfo {
			capable[p.GetHostPciPassthruInfo().Id] = p.GetHostPciPassthruInfo().PassthruCapable
		}
		if len(capable) != len(host.Hardware.PciDevice) {
			t.Errorf("host %s: %d passthrough entries for %d PCI devices", h.Name, len(capable),
				len(host.Hardware.PciDevice))
		}
		for _, g := range h.GPUs {
			if !capable[g.PciID] {
				t.Errorf("host %s: GPU %s has no passthrough capable entry", h.Name, g.PciID)
			}
		}
		var system mo.HostPciPassthruSystem
		if err := c.RetrieveOne(ctx, *cm.PciPassthruSystem, nil, &system); err != nil {
			t.Fatal(err)
		}
		if len(system.PciPassthruInfo) != len(capable) {
			t.Errorf("host %s: pciPassthruSystem lists %d devices, config %d", h.Name, len(system.PciPassthruInfo),
				len(capable))
		}
	}
}

func TestClusterConfigurationDefaults(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	configOf := func(ref types.ManagedObjectReference) *types.ClusterConfigInfoEx {
		var cluster mo.ClusterComputeResource
		if err := c.RetrieveOne(ctx, ref, []string{"configurationEx"}, &cluster); err != nil {
			t.Fatal(err)
		}
		return cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	}
	checkDefaults := func(name string, cfg *types.ClusterConfigInfoEx) {
		if cfg.VsanConfigInfo == nil || isTrue(cfg.VsanConfigInfo.Enabled) || cfg.VsanConfigInfo.DefaultConfig == nil {
			t.Errorf("%s: vsanConfigInfo %+v", name, cfg.VsanConfigInfo)
		}
		das := cfg.DasConfig
		if das.Enabled == nil || *das.Enabled || das.AdmissionControlPolicy == nil || das.DefaultVmSettings == nil ||
			das.DefaultVmSettings.VmToolsMonitoringSettings == nil || das.HostMonitoring != "enabled" {
			t.Errorf("%s: dasConfig %+v", name, das)
		}
		if cfg.DpmConfigInfo == nil || cfg.ProactiveDrsConfig == nil || cfg.InfraUpdateHaConfig == nil {
			t.Errorf("%s: DPM %+v, proactive DRS %+v, Quick Boot %+v", name, cfg.DpmConfigInfo,
				cfg.ProactiveDrsConfig, cfg.InfraUpdateHaConfig)
		}
	}
	topo := configOf(tl.clusters[0])
	checkDefaults("topology cluster", topo)
	if !isTrue(topo.DrsConfig.Enabled) {
		t.Errorf("topology cluster: DRS from the topology lost: %+v", topo.DrsConfig)
	}

	folders, err := object.NewDatacenter(c.Client, tl.datacenters[0]).Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	folder := folders.HostFolder
	plain, err := folder.CreateCluster(ctx, "plain", types.ClusterConfigSpecEx{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := configOf(plain.Reference())
	checkDefaults("API cluster", cfg)
	if isTrue(cfg.DrsConfig.Enabled) || cfg.DrsConfig.DefaultVmBehavior != types.DrsBehaviorFullyAutomated {
		t.Errorf("API cluster with an empty spec: DRS %+v, want off and fullyAutomated", cfg.DrsConfig)
	}
	drs, err := folder.CreateCluster(ctx, "with-drs", types.ClusterConfigSpecEx{
		DrsConfig: &types.ClusterDrsConfigInfo{Enabled: types.NewBool(true)},
		DpmConfig: &types.ClusterDpmConfigInfo{DefaultDpmBehavior: types.DpmBehaviorAutomated}})
	if err != nil {
		t.Fatal(err)
	}
	cfg = configOf(drs.Reference())
	if !isTrue(cfg.DrsConfig.Enabled) || cfg.DpmConfigInfo.DefaultDpmBehavior != types.DpmBehaviorAutomated {
		t.Errorf("API cluster with DRS in its spec: DRS %+v, DPM %+v", cfg.DrsConfig, cfg.DpmConfigInfo)
	}
}

// A VM created through the API carries config.tools.lastInstallInfo from the start, before any call on it, and no
// VM has the simulator's marker in config.extraConfig.
func TestCreatedVMHasToolsInstallRecord(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	var existing mo.VirtualMachine
	if err := c.RetrieveOne(ctx, tl.vms[0], []string{"parent", "resourcePool", "config.tools", "config.extraConfig",
		"datastore"},
		&existing); err != nil {
		t.Fatal(err)
	}
	var store mo.Datastore
	if err := c.RetrieveOne(ctx, existing.Datastore[0], []string{"name"}, &store); err != nil {
		t.Fatal(err)
	}
	if existing.Config.Tools.LastInstallInfo == nil {
		t.Error("a topology VM has no config.tools.lastInstallInfo")
	}
	folder := object.NewFolder(c.Client, *existing.Parent)
	task, err := folder.CreateVM(ctx, types.VirtualMachineConfigSpec{Name: "api-vm", GuestId: "ubuntu64Guest",
		Files: &types.VirtualMachineFileInfo{VmPathName: "[" + store.Name + "]"}}, object.NewResourcePool(c.Client,
		*existing.ResourcePool), nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var created mo.VirtualMachine
	if err := c.RetrieveOne(ctx, info.Result.(types.ManagedObjectReference), []string{"config.tools",
		"config.extraConfig"}, &created); err != nil {
		t.Fatal(err)
	}
	if created.Config.Tools.LastInstallInfo == nil {
		t.Error("a VM created through the API has no config.tools.lastInstallInfo")
	}
	for _, vm := range []mo.VirtualMachine{existing, created} {
		for _, option := range vm.Config.ExtraConfig {
			if option.GetOptionValue().Key == "govcsim" {
				t.Errorf("VM %s has the simulator's govcsim entry in config.extraConfig", vm.Self.Value)
			}
		}
	}
}
