package main

import (
	"net/http"
	"sort"
	"testing"

	"vcsim/labtest"
	"vcsim/tagging"
)

// The topology's tags are attached at start and read back through the REST API, by the lab's object ids.
func TestTopologyTagsThroughREST(t *testing.T) {
	tl := startLabWith(t, `{"datacenters": [{"name": "dc", "hosts": [{"name": "esx-1", "tags": ["rack:r1"]}],
		"vms": [{"name": "vm-a", "host": "esx-1", "tags": ["gpu-tier:gold", "team:ml"]},
		        {"name": "vm-b", "host": "esx-1", "tags": ["gpu-tier:gold"]}, {"name": "vm-c", "host": "esx-1"}]}]}`)
	api := labtest.Login(t, tl.server)
	objects := []tagging.ObjectID{}
	names := map[string]string{}
	for _, h := range tl.hosts {
		objects = append(objects, tagging.ObjectID{Type: "HostSystem", ID: h.Ref.Value})
		names[h.Ref.Value] = name(h.Ref)
	}
	for _, ref := range tl.vms {
		objects = append(objects, tagging.ObjectID{Type: "VirtualMachine", ID: ref.Value})
		names[ref.Value] = name(ref)
	}
	var attached []tagging.ObjectToTags
	if code := api.Do(http.MethodPost, "/api/cis/tagging/tag-association?action=list-attached-tags-on-objects",
		map[string]interface{}{"object_ids": objects}, &attached); code != http.StatusOK {
		t.Fatalf("list-attached-tags-on-objects: %d", code)
	}
	got := map[string][]string{}
	for _, entry := range attached {
		for _, id := range entry.TagIDs {
			var tag tagging.Tag
			var category tagging.Category
			api.Do(http.MethodGet, "/api/cis/tagging/tag/"+id, nil, &tag)
			api.Do(http.MethodGet, "/api/cis/tagging/category/"+tag.CategoryID, nil, &category)
			got[names[entry.ObjectID.ID]] = append(got[names[entry.ObjectID.ID]], category.Name+":"+tag.Name)
		}
	}
	for _, tags := range got {
		sort.Strings(tags)
	}
	want := map[string][]string{"esx-1": {"rack:r1"}, "vm-a": {"gpu-tier:gold", "team:ml"}, "vm-b": {"gpu-tier:gold"}}
	if len(got) != len(want) {
		t.Fatalf("tags: %v, want %v", got, want)
	}
	for object, tags := range want {
		if len(got[object]) != len(tags) || got[object][0] != tags[0] || got[object][len(tags)-1] != tags[len(tags)-1] {
			t.Errorf("tags of %s: %v, want %v", object, got[object], tags)
		}
	}
}
