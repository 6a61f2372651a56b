package vlcm

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"vcsim/bundle"
	"vcsim/jsonhttp"
	"vcsim/vapi"
)

// Offline depots and depot content (esx/settings/depots/offline, esx/settings/depot-content).

const depotsService = "com.vmware.esx.settings.depots.offline"

// Routes adds vLCM's REST operations to the lab's router.
func (v *Manager) Routes(rt *vapi.Router) {
	const offline = "/api/esx/settings/depots/offline"
	rt.Add(http.MethodGet, offline, v.listDepots)
	rt.Add(http.MethodPost, offline+"?vmw-task=true", v.createDepot)
	rt.Add(http.MethodGet, offline+"/{depot}", v.getDepot)
	rt.Add(http.MethodDelete, offline+"/{depot}?vmw-task=true", v.deleteDepot)
	rt.Add(http.MethodGet, offline+"/{depot}/content", v.depotContent)
	rt.Add(http.MethodGet, "/api/esx/settings/depot-content/components", v.listComponents)
	rt.Add(http.MethodGet, "/api/esx/settings/depot-content/components/{name}/versions/{version}", v.getComponent)
	rt.Add(http.MethodGet, "/api/esx/settings/depot-content/base-images", v.listBaseImages)
	v.imageRoutes(rt)
	v.remediationRoutes(rt)
	v.policyRoutes(rt)
}

type depotSummaryJSON struct {
	Description string `json:"description"`
	SourceType  string `json:"source_type"`
	Location    string `json:"location,omitempty"`
	Owner       string `json:"owner,omitempty"`
	CreateTime  string `json:"create_time,omitempty"`
}

func (d *offlineDepot) summary(withTime bool) depotSummaryJSON {
	j := depotSummaryJSON{Description: d.description, SourceType: "PULL", Location: d.location, Owner: d.owner}
	if withTime {
		j.CreateTime = vapi.Time(d.created)
	}
	return j
}

func (v *Manager) listDepots(c *vapi.Call) {
	v.mu.Lock()
	out := map[string]depotSummaryJSON{}
	for id, d := range v.depots {
		out[id] = d.summary(false)
	}
	v.mu.Unlock()
	jsonhttp.Write(c.W, http.StatusOK, out)
}

func (v *Manager) depot(c *vapi.Call) *offlineDepot {
	d := v.depots[c.Params["depot"]]
	if d == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "There is no offline depot %s.", c.Params["depot"]))
	}
	return d
}

func (v *Manager) getDepot(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d := v.depot(c); d != nil {
		jsonhttp.Write(c.W, http.StatusOK, d.summary(true))
	}
}

type depotCreateSpec struct {
	Description *string `json:"description"`
	SourceType  string  `json:"source_type"`
	Location    *string `json:"location"`
	FileID      *string `json:"file_id"`
	OwnerData   *string `json:"ownerdata"`
}

// createDepot imports an offline bundle by URL (PULL). The same location twice is refused at once; the same
// content from another location fails the task, both with the existing depot in the error's data, as vLCM does.
func (v *Manager) createDepot(c *vapi.Call) {
	var spec depotCreateSpec
	if !c.Decode(&spec) {
		return
	}
	if spec.SourceType != "PULL" {
		c.Fail(vapi.NewErr("INVALID_ARGUMENT", "source_type %q: the lab vCenter imports offline bundles by URL "+
			"only (PULL); PUSH needs the file upload service, which it does not serve.", spec.SourceType))
		return
	}
	if spec.Location == nil || *spec.Location == "" {
		c.Fail(vapi.NewErr("INVALID_ARGUMENT", "location is required with source_type PULL."))
		return
	}
	location := *spec.Location
	if u, err := url.Parse(location); err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
		c.Fail(vapi.NewErr("INVALID_ARGUMENT", "location %q is not an http, https or file URL.", location))
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for id, d := range v.depots {
		if d.location == location {
			e := vapi.NewErr("ALREADY_EXISTS", "The offline bundle at %s is already imported as depot %s.", location, id)
			e.Data = map[string]string{"depot": id}
			c.Fail(e)
			return
		}
	}
	description := ""
	if spec.Description != nil {
		description = *spec.Description
	}
	v.tasks.Start(c, depotsService, "create", nil, func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.tasks.SetProgress(t, 0, 2, "Downloading %s", location)
		data, err := v.fetch(location)
		if err != nil {
			return nil, vapi.NewErr("ERROR", "Cannot download the offline bundle from %s: %v.", location, err)
		}
		parsed, err := bundle.Parse(data)
		if err != nil {
			return nil, vapi.NewErr("ERROR", "The file at %s is not a valid offline bundle: %v.", location, err)
		}
		v.tasks.SetProgress(t, 1, 2, "Importing the metadata of %s", location)
		v.mu.Lock()
		defer v.mu.Unlock()
		if id := v.sameContent(parsed); id != "" {
			e := vapi.NewErr("ALREADY_EXISTS", "The content of %s is already imported as depot %s (from %s).",
				location, id, v.depots[id].location)
			e.Data = map[string]string{"depot": id}
			return nil, e
		}
		v.nextDepot++
		d := &offlineDepot{id: fmt.Sprintf("offline-depot-%d", v.nextDepot), description: description,
			location: location, owner: c.User, created: time.Now(), bundle: parsed}
		v.depots[d.id] = d
		v.lab.Logf("vLCM: imported %s as %s (%d components)", location, d.id, len(parsed.Components()))
		return map[string]string{"depot": d.id}, nil
	})
}

// sameContent returns a depot holding exactly the component versions of b, if there is one.
func (v *Manager) sameContent(b *bundle.Bundle) string {
	want := map[string]bool{}
	for _, c := range b.Components() {
		want[c.Name+"\x00"+c.Version] = true
	}
	for _, id := range v.depotIDs() {
		have := v.depots[id].bundle.Components()
		if len(have) != len(want) {
			continue
		}
		same := true
		for _, c := range have {
			same = same && want[c.Name+"\x00"+c.Version]
		}
		if same {
			return id
		}
	}
	return ""
}

// deleteDepot removes a depot and its content, unless a cluster's desired image needs a component version that
// only this depot holds.
func (v *Manager) deleteDepot(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := v.depot(c)
	if d == nil {
		return
	}
	available := v.available()
	for _, ref := range v.lab.Clusters() {
		img := v.images[ref]
		for _, component := range sortedKeys(img.components) {
			dc := available[component][img.components[component]]
			if dc != nil && len(dc.depots) == 1 && dc.depots[0] == d.id {
				c.Fail(vapi.NewErr("RESOURCE_IN_USE", "Depot %s holds component %s %s, which the desired image of "+
					"cluster %s uses and no other depot holds.", d.id, component, img.components[component], name(ref)))
				return
			}
		}
	}
	v.tasks.Start(c, depotsService, "delete", nil, func(t *vapi.Task) (interface{}, *vapi.Err) {
		v.mu.Lock()
		defer v.mu.Unlock()
		delete(v.depots, d.id)
		v.lab.Logf("vLCM: deleted depot %s (%s)", d.id, d.location)
		return nil, nil
	})
}

type depotComponentVersionJSON struct {
	Version        string `json:"version"`
	DisplayVersion string `json:"display_version"`
}

type depotComponentSummaryJSON struct {
	DisplayName string                      `json:"display_name"`
	Versions    []depotComponentVersionJSON `json:"versions"`
}

type metadataInfoJSON struct {
	FileName              string                                `json:"file_name"`
	BaseImages            []interface{}                         `json:"base_images"`
	Addons                map[string]interface{}                `json:"addons"`
	Solutions             map[string]interface{}                `json:"solutions"`
	HardwareSupport       map[string]interface{}                `json:"hardware_support"`
	IndependentComponents map[string]*depotComponentSummaryJSON `json:"independent_components"`
	Updates               map[string]map[string]string          `json:"updates"`
}

func (v *Manager) depotContent(c *vapi.Call) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := v.depot(c)
	if d == nil {
		return
	}
	bundles := map[string][]metadataInfoJSON{}
	for _, m := range d.bundle.Metadata {
		info := metadataInfoJSON{FileName: m.File, BaseImages: []interface{}{}, Addons: map[string]interface{}{},
			Solutions: map[string]interface{}{}, HardwareSupport: map[string]interface{}{},
			IndependentComponents: map[string]*depotComponentSummaryJSON{}, Updates: map[string]map[string]string{}}
		for _, comp := range m.Components {
			s := info.IndependentComponents[comp.Name]
			if s == nil {
				s = &depotComponentSummaryJSON{DisplayName: comp.DisplayName}
				info.IndependentComponents[comp.Name] = s
			}
			s.Versions = append(s.Versions, depotComponentVersionJSON{comp.Version, comp.DisplayVersion})
			if comp.Bulletin != "" {
				info.Updates[comp.Bulletin] = map[string]string{"summary": comp.Summary}
			}
		}
		bundles[m.Vendor] = append(bundles[m.Vendor], info)
	}
	jsonhttp.Write(c.W, http.StatusOK, map[string]interface{}{"metadata_bundles": bundles})
}

type componentVersionSummaryJSON struct {
	Version        string `json:"version"`
	DisplayVersion string `json:"display_version"`
	Summary        string `json:"summary"`
	Category       string `json:"category"`
	Urgency        string `json:"urgency"`
	KB             string `json:"kb"`
	ReleaseDate    string `json:"release_date"`
}

type componentSummaryJSON struct {
	Name        string                        `json:"name"`
	DisplayName string                        `json:"display_name"`
	Vendor      string                        `json:"vendor"`
	Versions    []componentVersionSummaryJSON `json:"versions"`
}

// listComponents answers depot-content/components with the filters names, vendors, versions, min_version and
// bundle_types; versions are sorted oldest first.
func (v *Manager) listComponents(c *vapi.Call) {
	names, vendors := vapi.QueryFilter(c, "names"), vapi.QueryFilter(c, "vendors")
	versions, types := vapi.QueryFilter(c, "versions"), vapi.QueryFilter(c, "bundle_types")
	minVersion := c.R.URL.Query().Get("min_version")
	v.mu.Lock()
	available := v.available()
	v.mu.Unlock()
	out := []componentSummaryJSON{}
	for _, name := range sortedNames(available) {
		var summary *componentSummaryJSON
		for _, version := range sortedVersions(available[name]) {
			dc := available[name][version]
			if !names.Allows(name) || !vendors.Allows(dc.Vendor) || !versions.Allows(version) ||
				!types.Allows(dc.bundleType) || (minVersion != "" && compareVersions(version, minVersion) < 0) {
				continue
			}
			if summary == nil {
				summary = &componentSummaryJSON{Name: name, DisplayName: dc.DisplayName, Vendor: dc.Vendor}
			}
			summary.Versions = append(summary.Versions, componentVersionSummaryJSON{
				Version: version, DisplayVersion: dc.DisplayVersion, Summary: dc.Summary, Category: dc.Category,
				Urgency: dc.Urgency, KB: dc.KB, ReleaseDate: releaseDate(dc.ReleaseDate)})
		}
		if summary != nil {
			out = append(out, *summary)
		}
	}
	jsonhttp.Write(c.W, http.StatusOK, out)
}

func (v *Manager) getComponent(c *vapi.Call) {
	v.mu.Lock()
	dc := v.available()[c.Params["name"]][c.Params["version"]]
	v.mu.Unlock()
	if dc == nil {
		c.Fail(vapi.NewErr("NOT_FOUND", "No depot holds component %s version %s.", c.Params["name"],
			c.Params["version"]))
		return
	}
	jsonhttp.Write(c.W, http.StatusOK, map[string]string{
		"display_name": dc.DisplayName, "vendor": dc.Vendor, "display_version": dc.DisplayVersion,
		"summary": dc.Summary, "description": dc.Description, "category": dc.Category, "urgency": dc.Urgency,
		"kb": dc.KB, "contact": dc.Contact, "release_date": releaseDate(dc.ReleaseDate)})
}

func (v *Manager) listBaseImages(c *vapi.Call) {
	v.mu.Lock()
	out := []map[string]interface{}{}
	for _, b := range v.baseImages {
		out = append(out, map[string]interface{}{"display_name": "ESXi", "version": b.Version,
			"display_version": b.DisplayVersion, "release_date": b.ReleaseDate, "summary": "ESXi " + b.DisplayVersion,
			"category": "ENHANCEMENT", "kb": ""})
	}
	v.mu.Unlock()
	jsonhttp.Write(c.W, http.StatusOK, out)
}

func sortedNames(m map[string]map[string]*depotComponent) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// releaseDate writes a bulletin's date (2023-03-28T00:00:00) as a vAPI date-time.
func releaseDate(s string) string {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return vapi.Time(t)
		}
	}
	return vapi.Time(time.Unix(0, 0))
}
