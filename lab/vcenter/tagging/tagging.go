// Package tagging is vCenter's tagging service of the Automation API (com.vmware.cis.tagging): categories, tags and
// their associations with inventory objects, over REST under /api/cis/tagging and over JSON-RPC (package vapi). The
// lab seeds it from the topology (a host's or VM's "tags") and registers its routes and operations on its router;
// what it needs of the lab (its lock, whether an object exists) is its Lab interface.
//
// Paths, actions, request bodies, answers and errors are those of VMware's SDK for vSphere 8 and later,
// vmware-vcenter 9.1.1.0 com/vmware/cis/tagging_client.py: the services Category, Tag and TagAssociation, their
// OperationRestMetadata (http_method, url_template, request_body_parameter), the structures CategoryModel, TagModel,
// Category.CreateSpec, Tag.CreateSpec, TagAssociation.TagToObjects, ObjectToTags and BatchResult, and the errors each
// operation documents. The REST reference (https://developer.broadcom.com/xapis/vsphere-automation-api/latest/cis/)
// writes the same paths under /api. Not confirmed there: the status of a create (201 here, as the lab's other
// creating operations under /api answer), and the error of an object type a category does not allow, which the SDK
// documents as INVALID_ARGUMENT ("not eligible to be attached to this object") without the message.
package tagging

import (
	"crypto/rand"
	"fmt"
	"sort"
	"strings"
	"sync"

	"vcsim/lists"
	"vcsim/vapi"
)

// Cardinalities of a category (com.vmware.cis.tagging.category_model.cardinality).
const (
	Single   = "SINGLE"
	Multiple = "MULTIPLE"
)

// Lab is what the tagging service needs of the lab.
type Lab interface {
	// Lock and Unlock take and let go of the lab's lock.
	sync.Locker
	// Exists tells whether the inventory has an object of that managed object type and id (VirtualMachine vm-42).
	Exists(kind, id string) bool
}

// ObjectID is com.vmware.vapi.std.dynamic_ID: an inventory object by managed object type and id.
type ObjectID struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Category is com.vmware.cis.tagging.category_model.
type Category struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Cardinality     string   `json:"cardinality"`
	AssociableTypes []string `json:"associable_types"`
	UsedBy          []string `json:"used_by"`
}

// Tag is com.vmware.cis.tagging.tag_model.
type Tag struct {
	ID          string   `json:"id"`
	CategoryID  string   `json:"category_id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	UsedBy      []string `json:"used_by"`
}

// Service holds the categories, tags and associations. Its methods are called under the lab's lock.
type Service struct {
	lab        Lab
	categories map[string]*Category
	tags       map[string]*Tag
	attached   map[string][]ObjectID // tag id -> objects, in the order they were attached
	order      []string              // category and tag ids in the order they were made
}

// New answers an empty tagging service of the lab.
func New(lab Lab) *Service {
	return &Service{lab: lab, categories: map[string]*Category{}, tags: map[string]*Tag{},
		attached: map[string][]ObjectID{}}
}

// newID is an identifier as vCenter writes them: urn:vmomi:InventoryServiceCategory:<uuid>:GLOBAL and
// urn:vmomi:InventoryServiceTag:<uuid>:GLOBAL (the form the REST reference's examples and vCenter 8 answer).
func newID(kind string) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("urn:vmomi:InventoryService%s:%x-%x-%x-%x-%x:GLOBAL", kind, b[0:4], b[4:6], b[6:8], b[8:10],
		b[10:])
}

func invalid(format string, args ...interface{}) *vapi.Err {
	return vapi.NewErr("INVALID_ARGUMENT", format, args...)
}

// ---- categories ------------------------------------------------------------------------------------------------

// CategorySpec is com.vmware.cis.tagging.category.create_spec.
type CategorySpec struct {
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Cardinality     string   `json:"cardinality"`
	AssociableTypes []string `json:"associable_types"`
	CategoryID      *string  `json:"category_id,omitempty"`
}

// CreateCategory makes a category; names are unique (ALREADY_EXISTS), as Category.create documents.
func (s *Service) CreateCategory(spec CategorySpec) (string, *vapi.Err) {
	if strings.TrimSpace(spec.Name) == "" {
		return "", invalid("The category name must not be empty.")
	}
	if spec.Cardinality != Single && spec.Cardinality != Multiple {
		return "", invalid("The cardinality %q is not one of %s, %s.", spec.Cardinality, Single, Multiple)
	}
	if c := s.categoryNamed(spec.Name); c != nil {
		return "", vapi.NewErr("ALREADY_EXISTS", "A category named %s already exists (%s).", spec.Name, c.ID)
	}
	id := newID("Category")
	if spec.CategoryID != nil && *spec.CategoryID != "" {
		if s.categories[*spec.CategoryID] != nil {
			return "", vapi.NewErr("ALREADY_EXISTS", "A category with identifier %s already exists.", *spec.CategoryID)
		}
		id = *spec.CategoryID
	}
	types := append([]string{}, spec.AssociableTypes...)
	sort.Strings(types)
	s.categories[id] = &Category{ID: id, Name: spec.Name, Description: spec.Description,
		Cardinality: spec.Cardinality, AssociableTypes: types, UsedBy: []string{}}
	s.order = append(s.order, id)
	return id, nil
}

func (s *Service) categoryNamed(name string) *Category {
	for _, c := range s.categories {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// GetCategory answers a category or NOT_FOUND.
func (s *Service) GetCategory(id string) (*Category, *vapi.Err) {
	c := s.categories[id]
	if c == nil {
		return nil, vapi.NewErr("NOT_FOUND", "The category %s does not exist.", id)
	}
	copied := *c
	return &copied, nil
}

// DeleteCategory removes a category with its tags and their associations.
func (s *Service) DeleteCategory(id string) *vapi.Err {
	if s.categories[id] == nil {
		return vapi.NewErr("NOT_FOUND", "The category %s does not exist.", id)
	}
	for tagID, t := range s.tags {
		if t.CategoryID == id {
			s.forget(tagID)
		}
	}
	delete(s.categories, id)
	s.forgetOrder(id)
	return nil
}

// ListCategories answers the categories' ids in the order they were made.
func (s *Service) ListCategories() []string {
	return s.ids(func(id string) bool { return s.categories[id] != nil })
}

func (s *Service) ids(keep func(string) bool) []string {
	out := []string{}
	for _, id := range s.order {
		if keep(id) {
			out = append(out, id)
		}
	}
	return out
}

func (s *Service) forgetOrder(id string) {
	for i, other := range s.order {
		if other == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			return
		}
	}
}

// ---- tags ------------------------------------------------------------------------------------------------------

// TagSpec is com.vmware.cis.tagging.tag.create_spec.
type TagSpec struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	CategoryID  string  `json:"category_id"`
	TagID       *string `json:"tag_id,omitempty"`
}

// CreateTag makes a tag in a category; names are unique within the category (ALREADY_EXISTS), as Tag.create
// documents.
func (s *Service) CreateTag(spec TagSpec) (string, *vapi.Err) {
	if strings.TrimSpace(spec.Name) == "" {
		return "", invalid("The tag name must not be empty.")
	}
	if s.categories[spec.CategoryID] == nil {
		return "", vapi.NewErr("NOT_FOUND", "The category %s does not exist.", spec.CategoryID)
	}
	if t := s.tagNamed(spec.CategoryID, spec.Name); t != nil {
		return "", vapi.NewErr("ALREADY_EXISTS", "The category %s already has a tag named %s (%s).",
			s.categories[spec.CategoryID].Name, spec.Name, t.ID)
	}
	id := newID("Tag")
	if spec.TagID != nil && *spec.TagID != "" {
		if s.tags[*spec.TagID] != nil {
			return "", vapi.NewErr("ALREADY_EXISTS", "A tag with identifier %s already exists.", *spec.TagID)
		}
		id = *spec.TagID
	}
	s.tags[id] = &Tag{ID: id, CategoryID: spec.CategoryID, Name: spec.Name, Description: spec.Description,
		UsedBy: []string{}}
	s.order = append(s.order, id)
	return id, nil
}

func (s *Service) tagNamed(categoryID, name string) *Tag {
	for _, t := range s.tags {
		if t.CategoryID == categoryID && t.Name == name {
			return t
		}
	}
	return nil
}

// GetTag answers a tag or NOT_FOUND.
func (s *Service) GetTag(id string) (*Tag, *vapi.Err) {
	t := s.tags[id]
	if t == nil {
		return nil, vapi.NewErr("NOT_FOUND", "The tag %s does not exist.", id)
	}
	copied := *t
	return &copied, nil
}

// DeleteTag removes a tag and its associations.
func (s *Service) DeleteTag(id string) *vapi.Err {
	if s.tags[id] == nil {
		return vapi.NewErr("NOT_FOUND", "The tag %s does not exist.", id)
	}
	s.forget(id)
	return nil
}

func (s *Service) forget(tagID string) {
	delete(s.tags, tagID)
	delete(s.attached, tagID)
	s.forgetOrder(tagID)
}

// ListTags answers the tags' ids in the order they were made.
func (s *Service) ListTags() []string {
	return s.ids(func(id string) bool { return s.tags[id] != nil })
}

// ListTagsForCategory answers the ids of a category's tags, or NOT_FOUND.
func (s *Service) ListTagsForCategory(categoryID string) ([]string, *vapi.Err) {
	if s.categories[categoryID] == nil {
		return nil, vapi.NewErr("NOT_FOUND", "The category %s does not exist.", categoryID)
	}
	return s.ids(func(id string) bool { return s.tags[id] != nil && s.tags[id].CategoryID == categoryID }), nil
}

// ---- associations ----------------------------------------------------------------------------------------------

// Attach attaches a tag to an object. The object must exist and be of a type the tag's category allows (an empty
// associable_types allows every type), and a SINGLE category allows one of its tags per object: otherwise
// INVALID_ARGUMENT, as TagAssociation.attach documents. Attaching an attached tag again changes nothing.
func (s *Service) Attach(tagID string, object ObjectID) *vapi.Err {
	t := s.tags[tagID]
	if t == nil {
		return vapi.NewErr("NOT_FOUND", "The tag %s does not exist.", tagID)
	}
	if object.Type == "" || object.ID == "" || !s.lab.Exists(object.Type, object.ID) {
		return invalid("The object %s %s does not exist.", object.Type, object.ID)
	}
	c := s.categories[t.CategoryID]
	if len(c.AssociableTypes) > 0 && !lists.Contains(c.AssociableTypes, object.Type) {
		return invalid("The tag %s of category %s cannot be attached to a %s (the category allows %s).", t.Name,
			c.Name, object.Type, strings.Join(c.AssociableTypes, ", "))
	}
	if s.isAttached(tagID, object) {
		return nil
	}
	if c.Cardinality == Single {
		for _, other := range s.attachedTags(object) {
			if s.tags[other].CategoryID == c.ID {
				return invalid("The category %s takes one tag per object, and %s %s already has %s.", c.Name,
					object.Type, object.ID, s.tags[other].Name)
			}
		}
	}
	s.attached[tagID] = append(s.attached[tagID], object)
	return nil
}

// Detach detaches a tag from an object; a tag that is not attached changes nothing.
func (s *Service) Detach(tagID string, object ObjectID) *vapi.Err {
	if s.tags[tagID] == nil {
		return vapi.NewErr("NOT_FOUND", "The tag %s does not exist.", tagID)
	}
	objects := s.attached[tagID]
	for i, o := range objects {
		if o == object {
			s.attached[tagID] = append(objects[:i:i], objects[i+1:]...)
			break
		}
	}
	return nil
}

func (s *Service) isAttached(tagID string, object ObjectID) bool {
	for _, o := range s.attached[tagID] {
		if o == object {
			return true
		}
	}
	return false
}

// AttachedObjects answers the objects a tag is attached to that still exist (vCenter drops the associations of a
// removed object), or NOT_FOUND.
func (s *Service) AttachedObjects(tagID string) ([]ObjectID, *vapi.Err) {
	if s.tags[tagID] == nil {
		return nil, vapi.NewErr("NOT_FOUND", "The tag %s does not exist.", tagID)
	}
	out := []ObjectID{}
	for _, o := range s.attached[tagID] {
		if s.lab.Exists(o.Type, o.ID) {
			out = append(out, o)
		}
	}
	return out, nil
}

// attachedTags answers the ids of the tags attached to an object, in the order the tags were made.
func (s *Service) attachedTags(object ObjectID) []string {
	return s.ids(func(id string) bool { return s.tags[id] != nil && s.isAttached(id, object) })
}

// AttachedTags answers the ids of the tags attached to an object (none for an object that does not exist).
func (s *Service) AttachedTags(object ObjectID) []string {
	if !s.lab.Exists(object.Type, object.ID) {
		return []string{}
	}
	return s.attachedTags(object)
}

// TagToObjects is com.vmware.cis.tagging.tag_association.tag_to_objects.
type TagToObjects struct {
	TagID     string     `json:"tag_id"`
	ObjectIDs []ObjectID `json:"object_ids"`
}

// AttachedObjectsOnTags answers each given tag with its objects; ids that are not tags are left out (the SDK
// documents no error but UNAUTHENTICATED for list_attached_objects_on_tags).
func (s *Service) AttachedObjectsOnTags(tagIDs []string) []TagToObjects {
	out := []TagToObjects{}
	for _, id := range tagIDs {
		if objects, err := s.AttachedObjects(id); err == nil {
			out = append(out, TagToObjects{TagID: id, ObjectIDs: objects})
		}
	}
	return out
}

// ObjectToTags is com.vmware.cis.tagging.tag_association.object_to_tags.
type ObjectToTags struct {
	ObjectID ObjectID `json:"object_id"`
	TagIDs   []string `json:"tag_ids"`
}

// AttachedTagsOnObjects answers each given object with its tags, in the order given.
func (s *Service) AttachedTagsOnObjects(objects []ObjectID) []ObjectToTags {
	out := []ObjectToTags{}
	for _, o := range objects {
		out = append(out, ObjectToTags{ObjectID: o, TagIDs: s.AttachedTags(o)})
	}
	return out
}

// BatchResult is com.vmware.cis.tagging.tag_association.batch_result.
type BatchResult struct {
	Success       bool           `json:"success"`
	ErrorMessages []vapi.Message `json:"error_messages"`
}

func batch(errs []*vapi.Err) BatchResult {
	r := BatchResult{Success: true, ErrorMessages: []vapi.Message{}}
	for _, err := range errs {
		if err != nil {
			r.Success = false
			r.ErrorMessages = append(r.ErrorMessages, err.Messages...)
		}
	}
	return r
}

// AttachTags attaches several tags to one object (attach_multiple_tags_to_object): each failure is a message of
// the batch result, not an error.
func (s *Service) AttachTags(object ObjectID, tagIDs []string) BatchResult {
	errs := []*vapi.Err{}
	for _, id := range tagIDs {
		errs = append(errs, s.Attach(id, object))
	}
	return batch(errs)
}

// AttachToObjects attaches one tag to several objects (attach_tag_to_multiple_objects); an unknown tag is
// NOT_FOUND.
func (s *Service) AttachToObjects(tagID string, objects []ObjectID) (BatchResult, *vapi.Err) {
	if s.tags[tagID] == nil {
		return BatchResult{}, vapi.NewErr("NOT_FOUND", "The tag %s does not exist.", tagID)
	}
	errs := []*vapi.Err{}
	for _, o := range objects {
		errs = append(errs, s.Attach(tagID, o))
	}
	return batch(errs), nil
}

// ---- seeding from the topology -----------------------------------------------------------------------------------

// Seed attaches "category:tag" to an object, making the category (MULTIPLE, every type allowed) and the tag when
// they do not exist yet: how the topology's tags of hosts and VMs come into the lab.
func (s *Service) Seed(categoryTag string, object ObjectID) error {
	category, tag, ok := strings.Cut(categoryTag, ":")
	if !ok || category == "" || tag == "" {
		return fmt.Errorf("tag %q is not category:tag", categoryTag)
	}
	c := s.categoryNamed(category)
	if c == nil {
		id, err := s.CreateCategory(CategorySpec{Name: category, Cardinality: Multiple, AssociableTypes: []string{}})
		if err != nil {
			return err
		}
		c = s.categories[id]
	}
	t := s.tagNamed(c.ID, tag)
	if t == nil {
		id, err := s.CreateTag(TagSpec{Name: tag, CategoryID: c.ID})
		if err != nil {
			return err
		}
		t = s.tags[id]
	}
	if err := s.Attach(t.ID, object); err != nil {
		return err
	}
	return nil
}
