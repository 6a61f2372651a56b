package tagging

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"vcsim/labtest"
	"vcsim/vapi"
)

// fakeLab is an inventory of named objects; removing one drops it from the answers.
type fakeLab struct {
	sync.Mutex
	objects map[ObjectID]bool
}

func (l *fakeLab) Exists(kind, id string) bool { return l.objects[ObjectID{kind, id}] }

var (
	vm1   = ObjectID{"VirtualMachine", "vm-1"}
	vm2   = ObjectID{"VirtualMachine", "vm-2"}
	host1 = ObjectID{"HostSystem", "host-1"}
)

func newLab() *fakeLab {
	return &fakeLab{objects: map[ObjectID]bool{vm1: true, vm2: true, host1: true}}
}

// server serves the service's REST routes with a router whose credentials are labtest's (lab / s3cret).
func server(t *testing.T, s *Service) *labtest.API {
	rt := vapi.NewRouter(func() (string, string) { return "lab", "s3cret" })
	s.Routes(rt)
	srv := httptest.NewTLSServer(rt)
	t.Cleanup(srv.Close)
	return labtest.Login(t, srv)
}

func TestRESTCategoriesTagsAndAssociations(t *testing.T) {
	lab := newLab()
	api := server(t, New(lab))

	var category string
	if code := api.Do(http.MethodPost, "/api/cis/tagging/category", map[string]interface{}{"name": "gpu-tier",
		"description": "", "cardinality": "SINGLE", "associable_types": []string{"VirtualMachine"}},
		&category); code != http.StatusCreated || category == "" {
		t.Fatalf("create category: %d %q", code, category)
	}
	var again Err
	if code := api.Do(http.MethodPost, "/api/cis/tagging/category", map[string]interface{}{"name": "gpu-tier",
		"description": "", "cardinality": "MULTIPLE", "associable_types": []string{}},
		&again); code != http.StatusBadRequest || again.ErrorType != "ALREADY_EXISTS" {
		t.Fatalf("a second category of one name: %d %+v", code, again)
	}
	tags := map[string]string{}
	for _, name := range []string{"gold", "silver"} {
		var id string
		if code := api.Do(http.MethodPost, "/api/cis/tagging/tag", map[string]interface{}{"name": name,
			"description": "", "category_id": category}, &id); code != http.StatusCreated {
			t.Fatalf("create tag %s: %d", name, code)
		}
		tags[name] = id
	}
	var model Tag
	api.Do(http.MethodGet, "/api/cis/tagging/tag/"+tags["gold"], nil, &model)
	if model.Name != "gold" || model.CategoryID != category {
		t.Fatalf("tag: %+v", model)
	}
	var inCategory []string
	api.Do(http.MethodPost, "/api/cis/tagging/tag?action=list-tags-for-category",
		map[string]string{"category_id": category}, &inCategory)
	if !reflect.DeepEqual(inCategory, []string{tags["gold"], tags["silver"]}) {
		t.Fatalf("tags of the category: %v", inCategory)
	}

	attach := func(tag string, object ObjectID) (int, Err) {
		var e Err
		code := api.Do(http.MethodPost, "/api/cis/tagging/tag-association/"+tag+"?action=attach",
			map[string]ObjectID{"object_id": object}, nil)
		if code != http.StatusNoContent {
			api.Do(http.MethodPost, "/api/cis/tagging/tag-association/"+tag+"?action=attach",
				map[string]ObjectID{"object_id": object}, &e)
		}
		return code, e
	}
	if code, e := attach(tags["gold"], vm1); code != http.StatusNoContent {
		t.Fatalf("attach: %d %+v", code, e)
	}
	if code, _ := attach(tags["gold"], vm1); code != http.StatusNoContent {
		t.Fatalf("attaching again is a no-op: %d", code)
	}
	// SINGLE: one tag of the category per object; associable types: VMs only; unknown objects refused.
	for _, refused := range []struct {
		tag    string
		object ObjectID
	}{{tags["silver"], vm1}, {tags["gold"], host1}, {tags["gold"], ObjectID{"VirtualMachine", "vm-99"}}} {
		if code, e := attach(refused.tag, refused.object); code != http.StatusBadRequest || e.ErrorType != "INVALID_ARGUMENT" {
			t.Errorf("attach %v: %d %+v, want INVALID_ARGUMENT", refused.object, code, e)
		}
	}
	attach(tags["silver"], vm2)

	var onObjects []ObjectToTags
	api.Do(http.MethodPost, "/api/cis/tagging/tag-association?action=list-attached-tags-on-objects",
		map[string][]ObjectID{"object_ids": {vm1, vm2, host1}}, &onObjects)
	want := []ObjectToTags{{vm1, []string{tags["gold"]}}, {vm2, []string{tags["silver"]}}, {host1, []string{}}}
	if !reflect.DeepEqual(onObjects, want) {
		t.Fatalf("list-attached-tags-on-objects: %+v, want %+v", onObjects, want)
	}
	var onTags []TagToObjects
	api.Do(http.MethodPost, "/api/cis/tagging/tag-association?action=list-attached-objects-on-tags",
		map[string][]string{"tag_ids": {tags["gold"], tags["silver"], "urn:vmomi:InventoryServiceTag:none:GLOBAL"}}, &onTags)
	if !reflect.DeepEqual(onTags, []TagToObjects{{tags["gold"], []ObjectID{vm1}}, {tags["silver"], []ObjectID{vm2}}}) {
		t.Fatalf("list-attached-objects-on-tags: %+v", onTags)
	}

	// A removed VM loses its tags; a detached tag is gone; deleting the category deletes its tags.
	delete(lab.objects, vm2)
	var objects []ObjectID
	api.Do(http.MethodPost, "/api/cis/tagging/tag-association/"+tags["silver"]+"?action=list-attached-objects", nil,
		&objects)
	if len(objects) != 0 {
		t.Fatalf("objects of silver after vm-2 went: %v", objects)
	}
	api.Do(http.MethodPost, "/api/cis/tagging/tag-association/"+tags["gold"]+"?action=detach",
		map[string]ObjectID{"object_id": vm1}, nil)
	var attached []string
	api.Do(http.MethodPost, "/api/cis/tagging/tag-association?action=list-attached-tags",
		map[string]ObjectID{"object_id": vm1}, &attached)
	if len(attached) != 0 {
		t.Fatalf("tags of vm-1 after detach: %v", attached)
	}
	if code := api.Do(http.MethodDelete, "/api/cis/tagging/category/"+category, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete category: %d", code)
	}
	var left []string
	api.Do(http.MethodGet, "/api/cis/tagging/tag", nil, &left)
	var missing Err
	if len(left) != 0 || api.Do(http.MethodGet, "/api/cis/tagging/category/"+category, nil, &missing) != http.StatusNotFound {
		t.Fatalf("after deleting the category: tags %v, %+v", left, missing)
	}
}

// Err is a vAPI error body as a client reads it.
type Err struct {
	ErrorType string `json:"error_type"`
}

func TestSeedMakesCategoriesAndTagsOnce(t *testing.T) {
	s := New(newLab())
	for _, seed := range []struct {
		tag    string
		object ObjectID
	}{{"gpu-tier:gold", vm1}, {"gpu-tier:gold", vm2}, {"team:ml", vm1}, {"gpu-tier:silver", host1}} {
		if err := s.Seed(seed.tag, seed.object); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.ListCategories()) != 2 || len(s.ListTags()) != 3 {
		t.Fatalf("categories %v, tags %v", s.ListCategories(), s.ListTags())
	}
	names := []string{}
	for _, id := range s.AttachedTags(vm1) {
		tag, _ := s.GetTag(id)
		category, _ := s.GetCategory(tag.CategoryID)
		names = append(names, category.Name+":"+tag.Name)
	}
	if !reflect.DeepEqual(names, []string{"gpu-tier:gold", "team:ml"}) {
		t.Fatalf("tags of vm-1: %v", names)
	}
	if err := s.Seed("gpu-tier", vm1); err == nil {
		t.Fatal("a tag without its category was seeded")
	}
	if err := s.Seed("gpu-tier:gold", ObjectID{"VirtualMachine", "vm-404"}); err == nil {
		t.Fatal("a tag was attached to an object that does not exist")
	}
}

// JSON-RPC: the SDK's wrapped values in, structures out.
func TestJSONRPCOperations(t *testing.T) {
	s := New(newLab())
	ops := s.Operations()
	call := func(name, input string) (interface{}, *vapi.Err) {
		t.Helper()
		c := &vapi.Invocation{Input: map[string]interface{}{}}
		if err := json.Unmarshal([]byte(input), &c.Input); err != nil {
			t.Fatal(err)
		}
		return ops[name](c)
	}
	id, err := call("com.vmware.cis.tagging.category.create", `{"create_spec": {"STRUCTURE": {
		"com.vmware.cis.tagging.category.create_spec": {"name": "team", "description": "", "cardinality": "MULTIPLE",
		"associable_types": [], "category_id": {"OPTIONAL": null}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := call("com.vmware.cis.tagging.tag.create", `{"create_spec": {"STRUCTURE": {
		"com.vmware.cis.tagging.tag.create_spec": {"name": "ml", "description": "", "category_id": "`+id.(string)+`",
		"tag_id": {"OPTIONAL": null}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	object := `{"STRUCTURE": {"com.vmware.vapi.std.dynamic_ID": {"type": "HostSystem", "id": "host-1"}}}`
	if _, err := call("com.vmware.cis.tagging.tag_association.attach", `{"tag_id": "`+tag.(string)+`", "object_id": `+
		object+`}`); err != nil {
		t.Fatal(err)
	}
	out, err := call("com.vmware.cis.tagging.tag_association.list_attached_tags_on_objects",
		`{"object_ids": [`+object+`]}`)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	want := `[{"STRUCTURE":{"com.vmware.cis.tagging.tag_association.object_to_tags":{"object_id":{"STRUCTURE":` +
		`{"com.vmware.vapi.std.dynamic_ID":{"id":"host-1","type":"HostSystem"}}},"tag_ids":["` + tag.(string) + `"]}}}]`
	if string(raw) != want {
		t.Fatalf("list_attached_tags_on_objects: %s\nwant %s", raw, want)
	}
	if _, err := call("com.vmware.cis.tagging.tag.get", `{"tag_id": "urn:vmomi:InventoryServiceTag:x:GLOBAL"}`); err == nil ||
		err.ErrorType != "NOT_FOUND" {
		t.Fatalf("unknown tag: %v", err)
	}
}
