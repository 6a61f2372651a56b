// Package vlcm is vSphere Lifecycle Manager's REST API of the lab: offline depots, cluster images with drafts,
// compliance and remediation. The state lives here; the REST operations are in depots.go, image.go, policies.go
// and remediate.go; what it needs of the rest of the lab is the Lab interface (lab.go). Everything is read and
// changed under the lab's lock, so SOAP calls and vLCM tasks see each other's changes whole.
package vlcm

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/bundle"
	"vcsim/jsonhttp"
	"vcsim/topology"
	"vcsim/vapi"
)

const (
	BaseImageComponent      = "ESXi" // the component that is the base image
	defaultBaseImage        = "8.0.2-0.0.22380479"
	defaultRemediationDelay = 300 * time.Millisecond
	maxBundleBytes          = 512 << 20
	fetchTimeout            = 60 * time.Second
)

// BaseImage is an ESXi release the lab's vLCM knows (the online depot every vCenter syncs).
type BaseImage struct {
	Version, DisplayVersion, ReleaseDate string
}

var defaultBaseImages = []BaseImage{
	{"8.0.2-0.0.22380479", "8.0 U2", "2023-09-21T00:00:00.000Z"},
	{"8.0.1-0.0.21495797", "8.0 U1", "2023-04-18T00:00:00.000Z"},
	{"7.0.3-0.95.22348816", "7.0 U3o", "2023-09-28T00:00:00.000Z"},
}

// Manager is vLCM's state and its REST operations.
type Manager struct {
	lab   Lab
	mu    sync.Locker // the lab's lock
	tasks *vapi.Tasks // the CIS tasks its REST operations start

	depots    map[string]*offlineDepot
	nextDepot int
	images    map[types.ManagedObjectReference]*clusterImage
	installed map[types.ManagedObjectReference]map[string]string // host -> component -> version

	baseImages       []BaseImage
	remediationDelay time.Duration
	depotDir         string
	client           *http.Client
}

type offlineDepot struct {
	id, description, location, owner string
	created                          time.Time
	bundle                           *bundle.Bundle
}

// clusterImage is a cluster's desired software and what vLCM remembers about it.
type clusterImage struct {
	managed    bool
	baseImage  string
	components map[string]string
	commit     int
	drafts     map[string]*imageDraft
	nextDraft  int
	busy       string // the apply, scan or check running on the cluster
	compliance *clusterCompliance
	lastApply  *applyResult
	policy     applyPolicy          // remediation settings configured on the cluster (policies/apply)
	commits    map[int]*imageCommit // every commit of the image, by number
}

type imageDraft struct {
	id, owner  string
	created    time.Time
	baseImage  string
	components map[string]string
}

// New gives the lab's hosts the components the topology says they run and its clusters their image. mu is the
// lab's lock, which the caller holds.
func New(l Lab, mu sync.Locker, tasks *vapi.Tasks, topo *topology.Topology) *Manager {
	v := &Manager{
		lab:              l,
		mu:               mu,
		tasks:            tasks,
		depots:           map[string]*offlineDepot{},
		images:           map[types.ManagedObjectReference]*clusterImage{},
		installed:        map[types.ManagedObjectReference]map[string]string{},
		baseImages:       append([]BaseImage(nil), defaultBaseImages...),
		remediationDelay: defaultRemediationDelay,
	}
	v.Configure("", nil)
	if topo.VLCM != nil && topo.VLCM.RemediationDelayMS != nil {
		v.remediationDelay = time.Duration(*topo.VLCM.RemediationDelayMS) * time.Millisecond
	}
	hostSpecs := map[string]*topology.HostSpec{}
	clusterSpecs := map[string]*topology.ClusterSpec{}
	for _, dc := range topo.Datacenters {
		for _, c := range dc.Clusters {
			clusterSpecs[c.Name] = c
		}
		for _, h := range dc.AllHosts() {
			hostSpecs[h.Name] = h
		}
	}
	for _, h := range l.Hosts() {
		v.installed[h.Ref] = initialComponents(hostSpecs[h.Name])
		if version, ok := v.installed[h.Ref][BaseImageComponent]; ok && v.BaseImage(version) == nil {
			v.baseImages = append(v.baseImages, BaseImage{version, version, "2023-01-01T00:00:00.000Z"})
		}
	}
	for _, ref := range l.Clusters() {
		cluster := simulator.Map.Get(ref).(*simulator.ClusterComputeResource)
		spec := clusterSpecs[cluster.Name]
		img := &clusterImage{managed: spec == nil || spec.ImageManaged == nil || *spec.ImageManaged,
			baseImage: defaultBaseImage, components: map[string]string{}, commit: 1, drafts: map[string]*imageDraft{}}
		if len(cluster.Host) > 0 && v.installed[cluster.Host[0]][BaseImageComponent] != "" {
			img.baseImage = v.installed[cluster.Host[0]][BaseImageComponent]
		}
		img.record("lab", "Initial image")
		v.images[ref] = img
	}
	return v
}

func initialComponents(spec *topology.HostSpec) map[string]string {
	components := map[string]string{BaseImageComponent: defaultBaseImage}
	if spec != nil && len(spec.Components) > 0 {
		components = map[string]string{}
		for name, version := range spec.Components {
			components[name] = version
		}
	}
	return components
}

// BaseImage is the base image of that version, or nil when vLCM does not know it. The caller holds the lock.
func (v *Manager) BaseImage(version string) *BaseImage {
	for i := range v.baseImages {
		if v.baseImages[i].Version == version {
			return &v.baseImages[i]
		}
	}
	return nil
}

// Configure sets where GET /lab/depot/ serves files from and the TLS configuration whose certificate the depot
// downloads trust next to the system's roots (the lab's own self-signed certificate).
func (v *Manager) Configure(depotDir string, own *tls.Config) {
	v.depotDir = depotDir
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if own != nil {
		for _, cert := range own.Certificates {
			for _, der := range cert.Certificate {
				if parsed, err := x509.ParseCertificate(der); err == nil {
					roots.AddCert(parsed)
				}
			}
		}
	}
	v.client = &http.Client{Timeout: fetchTimeout, Transport: &http.Transport{
		Proxy:           http.ProxyFromEnvironment,
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	}}
}

// fetch downloads an offline bundle as vLCM does for a PULL import: http, https or a file on the vCenter.
func (v *Manager) fetch(location string) ([]byte, error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, err
	}
	var body io.ReadCloser
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("a file URL names a file on the vCenter itself, not on host %q", u.Host)
		}
		f, err := os.Open(u.Path)
		if err != nil {
			return nil, err
		}
		body = f
	case "http", "https":
		res, err := v.client.Get(location)
		if err != nil {
			return nil, err
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			return nil, fmt.Errorf("the server answered %s", res.Status)
		}
		body = res.Body
	default:
		return nil, fmt.Errorf("scheme %q is not one of http, https, file", u.Scheme)
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxBundleBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBundleBytes {
		return nil, fmt.Errorf("it is larger than the lab's limit of %d MiB", maxBundleBytes>>20)
	}
	return data, nil
}

// DepotFiles serves the files of the depot directory (GET /lab/depot/<file>), for PULL imports over HTTPS.
func (v *Manager) DepotFiles() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v.depotDir == "" {
			jsonhttp.Error(w, http.StatusNotFound, "the lab serves no depot directory (start it with -depot-dir)")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			jsonhttp.Error(w, http.StatusMethodNotAllowed, "/lab/depot/ takes GET")
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/lab/depot/")
		file := filepath.Join(v.depotDir, filepath.FromSlash(bundle.CleanPath(name)))
		if info, err := os.Stat(file); err != nil || info.IsDir() {
			jsonhttp.Error(w, http.StatusNotFound, "no file %q in the lab's depot directory", name)
			return
		}
		http.ServeFile(w, r, file)
	})
}

// ---- what the depots hold ----------------------------------------------------------------------------------------

// depotComponent is one version of a component the depots hold, with the depots that carry it.
type depotComponent struct {
	*bundle.Component
	bundleType string // INDEPENDENT or BASE_IMAGE
	depots     []string
}

// available lists every component version of the depots (and the base images' ESXi component), by name and
// version. The caller holds the lock.
func (v *Manager) available() map[string]map[string]*depotComponent {
	out := map[string]map[string]*depotComponent{}
	add := func(c *bundle.Component, bundleType, depot string) {
		if out[c.Name] == nil {
			out[c.Name] = map[string]*depotComponent{}
		}
		dc := out[c.Name][c.Version]
		if dc == nil {
			dc = &depotComponent{Component: c, bundleType: bundleType}
			out[c.Name][c.Version] = dc
		}
		if depot != "" {
			dc.depots = append(dc.depots, depot)
		}
	}
	for _, b := range v.baseImages {
		add(&bundle.Component{Name: BaseImageComponent, DisplayName: "ESXi", Version: b.Version,
			DisplayVersion: b.DisplayVersion, Vendor: "VMware, Inc.", Summary: "ESXi " + b.DisplayVersion,
			Description: "ESXi base image " + b.DisplayVersion, Category: "ENHANCEMENT", Urgency: "IMPORTANT",
			ReleaseDate: b.ReleaseDate}, "BASE_IMAGE", "")
	}
	for _, id := range v.depotIDs() {
		for _, c := range v.depots[id].bundle.Components() {
			add(c, "INDEPENDENT", id)
		}
	}
	return out
}

func (v *Manager) depotIDs() []string {
	ids := make([]string, 0, len(v.depots))
	for id := range v.depots {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return v.depots[ids[i]].created.Before(v.depots[ids[j]].created) })
	return ids
}

// compareVersions orders component versions: runs of digits compare as numbers, everything else as text
// (525.105.14-1OEM.800.1.0.20613240 < 535.54.06-1OEM.800.1.0.20613240).
func compareVersions(a, b string) int {
	ta, tb := versionTokens(a), versionTokens(b)
	for i := 0; i < len(ta) && i < len(tb); i++ {
		x, y := ta[i], tb[i]
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		switch {
		case ex == nil && ey == nil && nx != ny:
			if nx < ny {
				return -1
			}
			return 1
		case (ex != nil || ey != nil) && x != y:
			return strings.Compare(x, y)
		}
	}
	return len(ta) - len(tb)
}

func versionTokens(v string) []string {
	var tokens []string
	start := 0
	for i := 1; i <= len(v); i++ {
		if i == len(v) || unicode.IsDigit(rune(v[i])) != unicode.IsDigit(rune(v[i-1])) {
			tokens = append(tokens, v[start:i])
			start = i
		}
	}
	return tokens
}

func sortedVersions(versions map[string]*depotComponent) []string {
	out := make([]string, 0, len(versions))
	for v := range versions {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return compareVersions(out[i], out[j]) < 0 })
	return out
}

// ---- /lab/state --------------------------------------------------------------------------------------------------

// Depot is an offline depot in GET /lab/state.
type Depot struct {
	ID         string            `json:"id"`
	Location   string            `json:"location"`
	Components map[string]string `json:"components"`
}

// Depots lists the offline depots, oldest first. The caller holds the lock.
func (v *Manager) Depots() []Depot {
	out := []Depot{}
	for _, id := range v.depotIDs() {
		d := Depot{ID: id, Location: v.depots[id].location, Components: map[string]string{}}
		for _, c := range v.depots[id].bundle.Components() {
			d.Components[c.Name] = c.Version
		}
		out = append(out, d)
	}
	return out
}

// Installed is a copy of the components a host runs, name to version. The caller holds the lock.
func (v *Manager) Installed(host types.ManagedObjectReference) map[string]string {
	return copyMap(v.installed[host])
}

// Component is a component version a depot holds (or the base image's ESXi), or nil. The caller holds the lock.
func (v *Manager) Component(name, version string) *bundle.Component {
	if dc := v.available()[name][version]; dc != nil {
		return dc.Component
	}
	return nil
}

// Cluster is what GET /lab/state shows of a cluster's image.
type Cluster struct {
	Managed bool
	Drafts  int               // drafts neither committed nor deleted
	Image   map[string]string // the desired image's components, base image included; nil when not image-managed
	Commit  string            // the commit the image is at ("" when not image-managed)
	Commits []ImageCommit     // every commit, oldest first (empty when not image-managed)
}

// Cluster describes a cluster's image; nil for a cluster vLCM does not know. The caller holds the lock.
func (v *Manager) Cluster(ref types.ManagedObjectReference) *Cluster {
	img := v.images[ref]
	if img == nil {
		return nil
	}
	c := &Cluster{Managed: img.managed, Drafts: len(img.drafts), Commits: []ImageCommit{}}
	if img.managed {
		c.Image = img.effective()
		c.Commit = strconv.Itoa(img.commit)
		c.Commits = img.commitHistory()
	}
	return c
}

// SetRemediationDelay changes how long installing the image takes per host.
func (v *Manager) SetRemediationDelay(d time.Duration) {
	v.remediationDelay = d
}

func (img *clusterImage) effective() map[string]string {
	out := copyMap(img.components)
	out[BaseImageComponent] = img.baseImage
	return out
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
