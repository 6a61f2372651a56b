package vlcm

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/jsonhttp"
	"vcsim/vapi"
)

// A cluster's desired image (esx/settings/clusters/{cluster}/software) and its drafts.

const (
	softwareService   = "com.vmware.esx.settings.clusters.software"
	draftsService     = "com.vmware.esx.settings.clusters.software.drafts"
	enablementService = "com.vmware.esx.settings.clusters.enablement.software"
	clusterPath       = "/api/esx/settings/clusters/{cluster}"
)

func (v *Manager) imageRoutes(rt *vapi.Router) {
	rt.Add(http.MethodGet, clusterPath+"/enablement/software", v.getEnablement)
	rt.Add(http.MethodPut, clusterPath+"/enablement/software?vmw-task=true", v.enable)
	rt.Add(http.MethodGet, clusterPath+"/software", v.getSoftware)
	rt.Add(http.MethodGet, clusterPath+"/software/components", v.getComponents)
	rt.Add(http.MethodGet, clusterPath+"/software/components/{component}", v.getImageComponent)
	rt.Add(http.MethodGet, clusterPath+"/software/drafts", v.listDrafts)
	rt.Add(http.MethodPost, clusterPath+"/software/drafts", v.createDraft)
	rt.Add(http.MethodGet, clusterPath+"/software/drafts/{draft}", v.getDraft)
	rt.Add(http.MethodDelete, clusterPath+"/software/drafts/{draft}", v.deleteDraft)
	rt.Add(http.MethodGet, clusterPath+"/software/drafts/{draft}/software/components", v.getDraftComponents)
	rt.Add(http.MethodPatch, clusterPath+"/software/drafts/{draft}/software/components", v.updateDraftComponents)
	rt.Add(http.MethodPost, clusterPath+"/software/drafts/{draft}?action=validate&vmw-task=true", v.validateDraft)
	rt.Add(http.MethodPost, clusterPath+"/software/drafts/{draft}?action=commit&vmw-task=true", v.commitDraft)
}

// cluster finds the cluster of the request and its image; it answers 404 itself. The caller holds the lock.
func (v *Manager) cluster(c *vapi.Call) (types.ManagedObjectReference, *clusterImage) {
	ref := types.ManagedObjectReference{Type: "ClusterComputeResource", Value: c.Params["cluster"]}
	img := v.images[ref]
	if img == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "There is no cluster %s.", ref.Value))
	}
	return ref, img
}

// managed is cluster for operations on the desired image, which exists only on an image-managed cluster.
func (v *Manager) managed(c *vapi.Call) (types.ManagedObjectReference, *clusterImage) {
	ref, img := v.cluster(c)
	if img != nil && !img.managed {
		c.Fail(vapi.NewErr("NOT_FOUND", "Cluster %s (%s) is not managed with a single image, so it has no desired "+
			"software document; enable image management first.", name(ref), ref.Value))
		return ref, nil
	}
	return ref, img
}

func (v *Manager) getEnablement(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, img := v.cluster(c); img != nil {
		jsonhttp.Write(c.W, http.StatusOK, map[string]bool{"enabled": img.managed})
	}
}

// enable turns on image management, with the hosts' base image and no further components.
func (v *Manager) enable(c *vapi.Call) {
	var spec struct {
		SkipSoftwareCheck bool `json:"skip_software_check"`
	}
	if !c.Decode(&spec) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.cluster(c)
	if img == nil {
		return
	}
	if img.managed {
		c.Fail(vapi.NewErr("NOT_ALLOWED_IN_CURRENT_STATE", "Cluster %s is already managed with a single image.",
			name(ref)))
		return
	}
	v.tasks.Start(c, enablementService, "enable", clusterTarget(ref), func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.mu.Lock()
		defer v.mu.Unlock()
		img.managed = true
		v.lab.Logf("vLCM: cluster %s is now managed with a single image (ESXi %s)", name(ref), img.baseImage)
		return nil, nil
	})
}

func clusterTarget(ref types.ManagedObjectReference) map[string]string {
	return map[string]string{"type": "ClusterComputeResource", "id": ref.Value}
}

type componentDetailsJSON struct {
	DisplayName    string `json:"display_name"`
	Vendor         string `json:"vendor"`
	DisplayVersion string `json:"display_version,omitempty"`
}

type componentInfoJSON struct {
	Version string                `json:"version,omitempty"`
	Details *componentDetailsJSON `json:"details,omitempty"`
}

type baseImageInfoJSON struct {
	Version string            `json:"version"`
	Details map[string]string `json:"details,omitempty"`
}

type softwareInfoJSON struct {
	BaseImage  baseImageInfoJSON            `json:"base_image"`
	Components map[string]componentInfoJSON `json:"components"`
	Solutions  map[string]interface{}       `json:"solutions"`
}

func (v *Manager) baseImageInfo(version string) baseImageInfoJSON {
	j := baseImageInfoJSON{Version: version}
	if b := v.BaseImage(version); b != nil {
		j.Details = map[string]string{"display_name": "ESXi", "display_version": b.DisplayVersion,
			"release_date": b.ReleaseDate}
	}
	return j
}

// componentInfo describes a component version with the depot's details, when a depot holds it.
func componentInfo(available map[string]map[string]*depotComponent, name, version string) componentInfoJSON {
	j := componentInfoJSON{Version: version}
	if dc := available[name][version]; dc != nil {
		j.Details = &componentDetailsJSON{DisplayName: dc.DisplayName, Vendor: dc.Vendor,
			DisplayVersion: dc.DisplayVersion}
	}
	return j
}

func (v *Manager) software(base string, components map[string]string) softwareInfoJSON {
	return softwareInfoJSON{BaseImage: v.baseImageInfo(base), Components: v.componentsJSON(components),
		Solutions: map[string]interface{}{}}
}

func (v *Manager) componentsJSON(components map[string]string) map[string]componentInfoJSON {
	available := v.available()
	out := map[string]componentInfoJSON{}
	for name, version := range components {
		out[name] = componentInfo(available, name, version)
	}
	return out
}

func (v *Manager) getSoftware(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, img := v.managed(c); img != nil {
		jsonhttp.Write(c.W, http.StatusOK, v.software(img.baseImage, img.components))
	}
}

func (v *Manager) getComponents(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, img := v.managed(c); img != nil {
		jsonhttp.Write(c.W, http.StatusOK, v.componentsJSON(img.components))
	}
}

func (v *Manager) getImageComponent(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil {
		return
	}
	version, ok := img.components[c.Params["component"]]
	if !ok {
		c.Fail(vapi.NewErr("NOT_FOUND", "The desired image of cluster %s has no component %s.", name(ref),
			c.Params["component"]))
		return
	}
	jsonhttp.Write(c.W, http.StatusOK, componentInfo(v.available(), c.Params["component"], version))
}

// ---- drafts ------------------------------------------------------------------------------------------------------

type draftMetadataJSON struct {
	Owner        string `json:"owner"`
	Status       string `json:"status"`
	CreationTime string `json:"creation_time"`
}

func (v *Manager) draftMetadata(d *imageDraft) draftMetadataJSON {
	status := "VALID"
	if len(v.validate(d.baseImage, d.components)) > 0 {
		status = "INVALID"
	}
	return draftMetadataJSON{Owner: d.owner, Status: status, CreationTime: vapi.Time(d.created)}
}

func (v *Manager) draft(c *vapi.Call) (types.ManagedObjectReference, *clusterImage, *imageDraft) {
	ref, img := v.managed(c)
	if img == nil {
		return ref, nil, nil
	}
	d := img.drafts[c.Params["draft"]]
	if d == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "Cluster %s has no draft %s.", name(ref), c.Params["draft"]))
	}
	return ref, img, d
}

func (v *Manager) listDrafts(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, img := v.managed(c)
	if img == nil {
		return
	}
	owners := vapi.QueryFilter(c, "owners")
	out := map[string]map[string]draftMetadataJSON{}
	for id, d := range img.drafts {
		if owners.Allows(d.owner) {
			out[id] = map[string]draftMetadataJSON{"metadata": v.draftMetadata(d)}
		}
	}
	jsonhttp.Write(c.W, http.StatusOK, out)
}

// createDraft copies the desired image into a draft; a user has at most one draft per cluster.
func (v *Manager) createDraft(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img := v.managed(c)
	if img == nil {
		return
	}
	for id, d := range img.drafts {
		if d.owner == c.User {
			e := vapi.NewErr("ALREADY_EXISTS", "User %s already has draft %s of cluster %s; commit or delete it first.",
				c.User, id, name(ref))
			e.Data = map[string]string{"draft": id}
			c.Fail(e)
			return
		}
	}
	img.nextDraft++
	d := &imageDraft{id: strconv.Itoa(img.nextDraft), owner: c.User, created: time.Now(), baseImage: img.baseImage,
		components: copyMap(img.components)}
	img.drafts[d.id] = d
	jsonhttp.Write(c.W, http.StatusCreated, d.id)
}

func (v *Manager) getDraft(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, _, d := v.draft(c); d != nil {
		jsonhttp.Write(c.W, http.StatusOK, map[string]interface{}{"metadata": v.draftMetadata(d),
			"software": v.software(d.baseImage, d.components)})
	}
}

func (v *Manager) deleteDraft(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, img, d := v.draft(c); d != nil {
		delete(img.drafts, d.id)
		c.W.WriteHeader(http.StatusNoContent)
	}
}

func (v *Manager) getDraftComponents(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, _, d := v.draft(c); d != nil {
		jsonhttp.Write(c.W, http.StatusOK, v.componentsJSON(d.components))
	}
}

// updateDraftComponents sets and deletes components of a draft in one call. A component set without a version
// gets the newest version the depots hold; whether versions exist is for validate and commit to say.
func (v *Manager) updateDraftComponents(c *vapi.Call) {
	var spec struct {
		Set    map[string]*string `json:"components_to_set"`
		Delete []string           `json:"components_to_delete"`
	}
	if !c.Decode(&spec) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	_, _, d := v.draft(c)
	if d == nil {
		return
	}
	available := v.available()
	for component, version := range spec.Set {
		if version != nil {
			d.components[component] = *version
		} else if versions := sortedVersions(available[component]); len(versions) > 0 {
			d.components[component] = versions[len(versions)-1]
		} else {
			d.components[component] = ""
		}
	}
	for _, component := range spec.Delete {
		delete(d.components, component)
	}
	c.W.WriteHeader(http.StatusNoContent)
}

type notificationJSON struct {
	ID         string        `json:"id"`
	Time       string        `json:"time"`
	Message    vapi.Message  `json:"message"`
	Resolution *vapi.Message `json:"resolution,omitempty"`
	Type       string        `json:"type"`
}

type notificationsJSON struct {
	Info     []notificationJSON `json:"info"`
	Warnings []notificationJSON `json:"warnings"`
	Errors   []notificationJSON `json:"errors"`
}

func noNotifications() notificationsJSON {
	return notificationsJSON{Info: []notificationJSON{}, Warnings: []notificationJSON{}, Errors: []notificationJSON{}}
}

func notification(kind, id, resolution, format string, args ...interface{}) notificationJSON {
	n := notificationJSON{ID: id, Time: vapi.Time(time.Now()), Message: vapi.NewMessage(id, format, args...), Type: kind}
	if resolution != "" {
		r := vapi.NewMessage(id+".resolution", "%s", resolution)
		n.Resolution = &r
	}
	return n
}

// validate lists what is wrong with an image: a base image or component version that no depot holds.
func (v *Manager) validate(base string, components map[string]string) []notificationJSON {
	var errors []notificationJSON
	if v.BaseImage(base) == nil {
		errors = append(errors, notification("ERROR", "com.vmware.lab.vlcm.baseimage.missing",
			"Choose a base image the depots hold.", "Base image %s is not in any depot.", base))
	}
	available := v.available()
	for _, component := range sortedKeys(components) {
		version := components[component]
		switch {
		case component == BaseImageComponent:
			errors = append(errors, notification("ERROR", "com.vmware.lab.vlcm.component.baseimage",
				"Change the base image instead.", "Component %s is part of the base image.", component))
		case len(available[component]) == 0:
			errors = append(errors, notification("ERROR", "com.vmware.lab.vlcm.component.missing",
				"Import an offline bundle that holds it.", "Component %s is not in any depot.", component))
		case available[component][version] == nil:
			errors = append(errors, notification("ERROR", "com.vmware.lab.vlcm.component.version.missing",
				fmt.Sprintf("The depots hold versions %v.", sortedVersions(available[component])),
				"Component %s version %s is not in any depot.", component, version))
		}
	}
	return errors
}

func (v *Manager) validateDraft(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, _, d := v.draft(c)
	if d == nil {
		return
	}
	v.tasks.Start(c, draftsService, "validate", clusterTarget(ref), func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.mu.Lock()
		defer v.mu.Unlock()
		n := noNotifications()
		n.Errors = append(n.Errors, v.validate(d.baseImage, d.components)...)
		return map[string]interface{}{"notifications": n}, nil
	})
}

// commitDraft makes a valid draft the desired image; the draft is gone afterwards. The result is the commit id.
func (v *Manager) commitDraft(c *vapi.Call) {
	var spec struct {
		Message *string `json:"message"`
	}
	if !c.Decode(&spec) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, img, d := v.draft(c)
	if d == nil {
		return
	}
	v.tasks.Start(c, draftsService, "commit", clusterTarget(ref), func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if img.drafts[d.id] != d {
			return nil, vapi.NewErr("NOT_FOUND", "Cluster %s has no draft %s any more.", name(ref), d.id)
		}
		if errors := v.validate(d.baseImage, d.components); len(errors) > 0 {
			e := vapi.NewErr("INVALID_ARGUMENT", "Draft %s of cluster %s is not valid: %s", d.id, name(ref),
				errors[0].Message.DefaultMessage)
			n := noNotifications()
			n.Errors = errors
			e.Data = map[string]interface{}{"notifications": n}
			return nil, e
		}
		img.baseImage, img.components = d.baseImage, copyMap(d.components)
		img.commit++
		description := ""
		if spec.Message != nil {
			description = *spec.Message
		}
		img.record(d.owner, description)
		delete(img.drafts, d.id)
		v.lab.Logf("vLCM: cluster %s image commit %d: ESXi %s, components %v", name(ref), img.commit,
			img.baseImage, img.components)
		return strconv.Itoa(img.commit), nil
	})
}
