// Package bundle reads ESXi offline bundles, as vLCM imports them into a depot: a zip with index.xml (the vendors), per vendor an index file naming metadata archives,
// and in each metadata archive vmware.xml (or bulletins/*.xml) with the bulletins. A bulletin that carries
// componentNameSpec and componentVersionSpec is a component.
package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"vcsim/lists"
)

const maxMetadataBytes = 64 << 20

// Component is one component of a bundle, as the depot content API describes it.
type Component struct {
	Name           string
	DisplayName    string
	Version        string
	DisplayVersion string
	Vendor         string
	Summary        string
	Description    string
	Category       string // API enum: ENHANCEMENT, BUGFIX, SECURITY, ...
	Urgency        string // API enum: CRITICAL, IMPORTANT, MODERATE, LOW, GENERAL
	KB             string
	Contact        string
	ReleaseDate    string
	Bulletin       string
	Vibs           []string
}

// Metadata is one metadata archive of one vendor, as the depot content API lists it.
type Metadata struct {
	Vendor     string
	File       string
	Components []*Component
}

// Bundle is an offline bundle's components, by metadata archive.
type Bundle struct {
	Metadata []*Metadata
}

// Components answers every component of the bundle.
func (b *Bundle) Components() []*Component {
	var all []*Component
	for _, m := range b.Metadata {
		all = append(all, m.Components...)
	}
	return all
}

type xmlIndex struct {
	Vendors []struct {
		Name         string `xml:"name"`
		Code         string `xml:"code"`
		IndexFile    string `xml:"indexfile"`
		RelativePath string `xml:"relativePath"`
	} `xml:"vendor"`
}

type xmlVendorIndex struct {
	Metadata []struct {
		URL string `xml:"url"`
	} `xml:"metadata"`
}

type xmlBulletin struct {
	ID          string   `xml:"id"`
	Vendor      string   `xml:"vendor"`
	Summary     string   `xml:"summary"`
	Description string   `xml:"description"`
	Category    string   `xml:"category"`
	Severity    string   `xml:"severity"`
	Urgency     string   `xml:"urgency"`
	KbURL       string   `xml:"kbUrl"`
	Contact     string   `xml:"contact"`
	ReleaseDate string   `xml:"releaseDate"`
	VibIDs      []string `xml:"vibList>vibID"`
	NameSpec    *struct {
		Name     string `xml:"name,attr"`
		UIString string `xml:"uiString,attr"`
	} `xml:"componentNameSpec"`
	VersionSpec *struct {
		Version  string `xml:"version,attr"`
		UIString string `xml:"uiString,attr"`
	} `xml:"componentVersionSpec"`
}

type xmlMetadataResponse struct {
	Bulletins []xmlBulletin `xml:"bulletin"`
}

// Parse reads an offline bundle. The errors say what is wrong with it in words a user can act on.
func Parse(data []byte) (*Bundle, error) {
	archive, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("it is not a zip archive (%v)", err)
	}
	files := zipFiles(archive)
	var index xmlIndex
	if err := readXML(files, "index.xml", "the bundle", &index); err != nil {
		return nil, err
	}
	if len(index.Vendors) == 0 {
		return nil, fmt.Errorf("index.xml lists no vendor")
	}
	bundle := &Bundle{}
	seen := map[string]bool{}
	for _, vendor := range index.Vendors {
		indexFile := strings.TrimSpace(vendor.IndexFile)
		if indexFile == "" {
			indexFile = "vendor-index.xml"
		}
		indexPath := CleanPath(path.Join(strings.TrimSpace(vendor.RelativePath), indexFile))
		var vendorIndex xmlVendorIndex
		if err := readXML(files, indexPath, "index.xml", &vendorIndex); err != nil {
			return nil, err
		}
		for _, meta := range vendorIndex.Metadata {
			metaPath := CleanPath(path.Join(path.Dir(indexPath), strings.TrimSpace(meta.URL)))
			components, err := parseMetadata(files, metaPath, indexPath)
			if err != nil {
				return nil, err
			}
			m := &Metadata{Vendor: strings.TrimSpace(vendor.Name), File: path.Base(metaPath)}
			for _, c := range components {
				if key := c.Name + "\x00" + c.Version; !seen[key] {
					seen[key] = true
					m.Components = append(m.Components, c)
				}
			}
			bundle.Metadata = append(bundle.Metadata, m)
		}
	}
	if len(bundle.Components()) == 0 {
		return nil, fmt.Errorf("it holds no component: no bulletin in its metadata carries componentNameSpec " +
			"and componentVersionSpec")
	}
	return bundle, nil
}

func zipFiles(archive *zip.Reader) map[string]*zip.File {
	files := map[string]*zip.File{}
	for _, f := range archive.File {
		files[CleanPath(f.Name)] = f
	}
	return files
}

// CleanPath makes a path inside an archive or depot relative and free of "..", so it cannot leave its root.
func CleanPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

func readFile(files map[string]*zip.File, name, namedBy string) ([]byte, error) {
	f := files[name]
	if f == nil {
		return nil, fmt.Errorf("%s, named by %s, is missing", name, namedBy)
	}
	if f.UncompressedSize64 > maxMetadataBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than metadata ever takes", name, f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read: %v", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxMetadataBytes))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read: %v", name, err)
	}
	return data, nil
}

func readXML(files map[string]*zip.File, name, namedBy string, v interface{}) error {
	data, err := readFile(files, name, namedBy)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is not valid XML: %v", name, err)
	}
	return nil
}

// parseMetadata reads the bulletins of one metadata archive: vmware.xml, else every bulletins/*.xml.
func parseMetadata(files map[string]*zip.File, name, namedBy string) ([]*Component, error) {
	data, err := readFile(files, name, namedBy)
	if err != nil {
		return nil, err
	}
	archive, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s is not a zip archive (%v)", name, err)
	}
	meta := zipFiles(archive)
	var bulletins []xmlBulletin
	if _, ok := meta["vmware.xml"]; ok {
		var response xmlMetadataResponse
		if err := readXML(meta, "vmware.xml", name, &response); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		bulletins = response.Bulletins
	} else {
		var names []string
		for n := range meta {
			if strings.HasPrefix(n, "bulletins/") && strings.HasSuffix(n, ".xml") {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%s has neither vmware.xml nor bulletins/*.xml", name)
		}
		sort.Strings(names)
		for _, n := range names {
			var b xmlBulletin
			if err := readXML(meta, n, name, &b); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			bulletins = append(bulletins, b)
		}
	}
	var components []*Component
	for _, b := range bulletins {
		if c := b.component(); c != nil {
			components = append(components, c)
		}
	}
	return components, nil
}

func (b xmlBulletin) component() *Component {
	if b.NameSpec == nil || b.VersionSpec == nil || b.NameSpec.Name == "" || b.VersionSpec.Version == "" {
		return nil
	}
	c := &Component{
		Name:           b.NameSpec.Name,
		DisplayName:    firstOf(b.NameSpec.UIString, b.NameSpec.Name),
		Version:        b.VersionSpec.Version,
		DisplayVersion: firstOf(b.VersionSpec.UIString, b.VersionSpec.Version),
		Vendor:         strings.TrimSpace(b.Vendor),
		Summary:        strings.TrimSpace(b.Summary),
		Description:    strings.TrimSpace(b.Description),
		Category:       apiEnum(b.Category, componentCategories, "GENERAL"),
		Urgency:        apiEnum(firstOf(b.Urgency, b.Severity), componentUrgencies, "GENERAL"),
		KB:             strings.TrimSpace(b.KbURL),
		Contact:        strings.TrimSpace(b.Contact),
		ReleaseDate:    strings.TrimSpace(b.ReleaseDate),
		Bulletin:       strings.TrimSpace(b.ID),
	}
	for _, v := range b.VibIDs {
		c.Vibs = append(c.Vibs, strings.TrimSpace(v))
	}
	return c
}

var (
	componentCategories = []string{"SECURITY", "ENHANCEMENT", "BUGFIX", "RECALL", "RECALL_FIX", "INFO", "MISC", "GENERAL"}
	componentUrgencies  = []string{"CRITICAL", "IMPORTANT", "MODERATE", "LOW", "GENERAL"}
)

// apiEnum maps a bulletin's word (Enhancement, BugFix, important) to the API's enum value.
func apiEnum(word string, allowed []string, fallback string) string {
	w := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(word), "-", "_"))
	if w == "RECALLFIX" {
		w = "RECALL_FIX"
	}
	if lists.Contains(allowed, w) {
		return w
	}
	return fallback
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
