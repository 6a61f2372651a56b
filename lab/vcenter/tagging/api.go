package tagging

import (
	"encoding/json"
	"net/http"

	"vcsim/jsonhttp"
	"vcsim/vapi"
)

// The service's two front ends. REST: the url_template and request_body_parameter of each operation's
// OperationRestMetadata in vmware-vcenter 9.1.1.0 com/vmware/cis/tagging_client.py, under /api (a body is the
// operation's input structure, or the create_spec itself for the creates). JSON-RPC: the services
// com.vmware.cis.tagging.category, .tag and .tag_association with the SDK's operation names.

const base = "/api/cis/tagging"

// Routes serves the REST operations on the lab's router.
func (s *Service) Routes(rt *vapi.Router) {
	rt.Add(http.MethodGet, base+"/category", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		return http.StatusOK, s.ListCategories(), nil
	}))
	rt.Add(http.MethodPost, base+"/category", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var spec CategorySpec
		if !c.Decode(&spec) {
			return 0, nil, nil
		}
		id, err := s.CreateCategory(spec)
		return http.StatusCreated, id, err
	}))
	rt.Add(http.MethodGet, base+"/category/{categoryId}", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		category, err := s.GetCategory(c.Params["categoryId"])
		return http.StatusOK, category, err
	}))
	rt.Add(http.MethodDelete, base+"/category/{categoryId}", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		return http.StatusNoContent, nil, s.DeleteCategory(c.Params["categoryId"])
	}))
	rt.Add(http.MethodGet, base+"/tag", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		return http.StatusOK, s.ListTags(), nil
	}))
	rt.Add(http.MethodPost, base+"/tag", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var spec TagSpec
		if !c.Decode(&spec) {
			return 0, nil, nil
		}
		id, err := s.CreateTag(spec)
		return http.StatusCreated, id, err
	}))
	rt.Add(http.MethodPost, base+"/tag?action=list-tags-for-category", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in struct {
			CategoryID string `json:"category_id"`
		}
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		ids, err := s.ListTagsForCategory(in.CategoryID)
		return http.StatusOK, ids, err
	}))
	rt.Add(http.MethodGet, base+"/tag/{tagId}", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		tag, err := s.GetTag(c.Params["tagId"])
		return http.StatusOK, tag, err
	}))
	rt.Add(http.MethodDelete, base+"/tag/{tagId}", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		return http.StatusNoContent, nil, s.DeleteTag(c.Params["tagId"])
	}))
	s.associationRoutes(rt)
}

type objectInput struct {
	ObjectID ObjectID `json:"object_id"`
}

func (s *Service) associationRoutes(rt *vapi.Router) {
	assoc := base + "/tag-association"
	rt.Add(http.MethodPost, assoc+"/{tagId}?action=attach", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in objectInput
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		return http.StatusNoContent, nil, s.Attach(c.Params["tagId"], in.ObjectID)
	}))
	rt.Add(http.MethodPost, assoc+"/{tagId}?action=detach", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in objectInput
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		return http.StatusNoContent, nil, s.Detach(c.Params["tagId"], in.ObjectID)
	}))
	rt.Add(http.MethodPost, assoc+"/{tagId}?action=list-attached-objects", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		objects, err := s.AttachedObjects(c.Params["tagId"])
		return http.StatusOK, objects, err
	}))
	rt.Add(http.MethodPost, assoc+"/{tagId}?action=attach-tag-to-multiple-objects", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in struct {
			ObjectIDs []ObjectID `json:"object_ids"`
		}
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		result, err := s.AttachToObjects(c.Params["tagId"], in.ObjectIDs)
		return http.StatusOK, result, err
	}))
	rt.Add(http.MethodPost, assoc+"?action=list-attached-tags", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in objectInput
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		return http.StatusOK, s.AttachedTags(in.ObjectID), nil
	}))
	rt.Add(http.MethodPost, assoc+"?action=list-attached-objects-on-tags", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in struct {
			TagIDs []string `json:"tag_ids"`
		}
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		return http.StatusOK, s.AttachedObjectsOnTags(in.TagIDs), nil
	}))
	rt.Add(http.MethodPost, assoc+"?action=list-attached-tags-on-objects", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in struct {
			ObjectIDs []ObjectID `json:"object_ids"`
		}
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		return http.StatusOK, s.AttachedTagsOnObjects(in.ObjectIDs), nil
	}))
	rt.Add(http.MethodPost, assoc+"?action=attach-multiple-tags-to-object", s.rest(func(c *vapi.Call) (int, interface{}, *vapi.Err) {
		var in struct {
			ObjectID ObjectID `json:"object_id"`
			TagIDs   []string `json:"tag_ids"`
		}
		if !c.Decode(&in) {
			return 0, nil, nil
		}
		return http.StatusOK, s.AttachTags(in.ObjectID, in.TagIDs), nil
	}))
}

// rest runs a REST operation under the lab's lock and writes its answer: the value with the status, no body for
// 204, or the error. An operation that answered itself (a body that did not decode) returns status 0.
func (s *Service) rest(op func(c *vapi.Call) (int, interface{}, *vapi.Err)) func(*vapi.Call) {
	return func(c *vapi.Call) {
		s.lab.Lock()
		status, out, err := op(c)
		s.lab.Unlock()
		switch {
		case status == 0:
		case err != nil:
			c.Fail(err)
		case status == http.StatusNoContent:
			c.W.WriteHeader(status)
		default:
			jsonhttp.Write(c.W, status, out)
		}
	}
}

// ---- JSON-RPC ----------------------------------------------------------------------------------------------------

// Operations are the JSON-RPC operations by their names (service.operation).
func (s *Service) Operations() map[string]vapi.Operation {
	category, tag, assoc := "com.vmware.cis.tagging.category.", "com.vmware.cis.tagging.tag.",
		"com.vmware.cis.tagging.tag_association."
	ops := map[string]vapi.Operation{
		category + "list": func(c *vapi.Invocation) (interface{}, *vapi.Err) { return s.ListCategories(), nil },
		category + "create": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var spec CategorySpec
			if err := input(c, "create_spec", &spec); err != nil {
				return nil, err
			}
			id, err := s.CreateCategory(spec)
			return id, err
		},
		category + "get": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			found, err := s.GetCategory(str(c, "category_id"))
			if err != nil {
				return nil, err
			}
			return categoryValue(found), nil
		},
		category + "delete": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			return nil, s.DeleteCategory(str(c, "category_id"))
		},
		tag + "list": func(c *vapi.Invocation) (interface{}, *vapi.Err) { return s.ListTags(), nil },
		tag + "create": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var spec TagSpec
			if err := input(c, "create_spec", &spec); err != nil {
				return nil, err
			}
			id, err := s.CreateTag(spec)
			return id, err
		},
		tag + "get": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			found, err := s.GetTag(str(c, "tag_id"))
			if err != nil {
				return nil, err
			}
			return tagValue(found), nil
		},
		tag + "delete": func(c *vapi.Invocation) (interface{}, *vapi.Err) { return nil, s.DeleteTag(str(c, "tag_id")) },
		tag + "list_tags_for_category": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			ids, err := s.ListTagsForCategory(str(c, "category_id"))
			return ids, err
		},
	}
	for name, op := range s.associationOperations() {
		ops[assoc+name] = op
	}
	for name, op := range ops {
		ops[name] = s.locked(op)
	}
	return ops
}

func (s *Service) associationOperations() map[string]vapi.Operation {
	return map[string]vapi.Operation{
		"attach": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var object ObjectID
			if err := input(c, "object_id", &object); err != nil {
				return nil, err
			}
			return nil, s.Attach(str(c, "tag_id"), object)
		},
		"detach": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var object ObjectID
			if err := input(c, "object_id", &object); err != nil {
				return nil, err
			}
			return nil, s.Detach(str(c, "tag_id"), object)
		},
		"list_attached_objects": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			objects, err := s.AttachedObjects(str(c, "tag_id"))
			if err != nil {
				return nil, err
			}
			return objectValues(objects), nil
		},
		"list_attached_tags": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var object ObjectID
			if err := input(c, "object_id", &object); err != nil {
				return nil, err
			}
			return s.AttachedTags(object), nil
		},
		"list_attached_objects_on_tags": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var tagIDs []string
			if err := input(c, "tag_ids", &tagIDs); err != nil {
				return nil, err
			}
			out := []interface{}{}
			for _, entry := range s.AttachedObjectsOnTags(tagIDs) {
				out = append(out, vapi.NewStruct("com.vmware.cis.tagging.tag_association.tag_to_objects",
					map[string]interface{}{"tag_id": entry.TagID, "object_ids": objectValues(entry.ObjectIDs)}))
			}
			return out, nil
		},
		"list_attached_tags_on_objects": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var objects []ObjectID
			if err := input(c, "object_ids", &objects); err != nil {
				return nil, err
			}
			out := []interface{}{}
			for _, entry := range s.AttachedTagsOnObjects(objects) {
				out = append(out, vapi.NewStruct("com.vmware.cis.tagging.tag_association.object_to_tags",
					map[string]interface{}{"object_id": objectValue(entry.ObjectID), "tag_ids": entry.TagIDs}))
			}
			return out, nil
		},
		"attach_multiple_tags_to_object": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var object ObjectID
			var tagIDs []string
			if err := input(c, "object_id", &object); err != nil {
				return nil, err
			}
			if err := input(c, "tag_ids", &tagIDs); err != nil {
				return nil, err
			}
			return batchValue(s.AttachTags(object, tagIDs)), nil
		},
		"attach_tag_to_multiple_objects": func(c *vapi.Invocation) (interface{}, *vapi.Err) {
			var objects []ObjectID
			if err := input(c, "object_ids", &objects); err != nil {
				return nil, err
			}
			result, err := s.AttachToObjects(str(c, "tag_id"), objects)
			if err != nil {
				return nil, err
			}
			return batchValue(result), nil
		},
	}
}

func (s *Service) locked(op vapi.Operation) vapi.Operation {
	return func(c *vapi.Invocation) (interface{}, *vapi.Err) {
		s.lab.Lock()
		defer s.lab.Unlock()
		return op(c)
	}
}

// plain unwraps a JSON-RPC data value into plain JSON: structures into their fields, optionals into their value.
func plain(v interface{}) interface{} {
	switch value := v.(type) {
	case map[string]interface{}:
		if fields, ok := vapi.StructFields(value); ok {
			return plain(fields)
		}
		if inner, has := value["OPTIONAL"]; has && len(value) == 1 {
			return plain(inner)
		}
		out := map[string]interface{}{}
		for k, item := range value {
			out[k] = plain(item)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(value))
		for i, item := range value {
			out[i] = plain(item)
		}
		return out
	}
	return v
}

// input reads a required input field into out; a missing or mistyped field is INVALID_ARGUMENT.
func input(c *vapi.Invocation, field string, out interface{}) *vapi.Err {
	value, ok := c.Input[field]
	if !ok || value == nil {
		return vapi.NewErr("INVALID_ARGUMENT", "Missing value for the required field %q.", field)
	}
	raw, err := json.Marshal(plain(value))
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		return vapi.NewErr("INVALID_ARGUMENT", "The field %q is not valid: %v.", field, err)
	}
	return nil
}

// str reads a string input field ("" when missing, which then is NOT_FOUND as an unknown identifier).
func str(c *vapi.Invocation, field string) string {
	s, _ := c.Input[field].(string)
	return s
}

func categoryValue(c *Category) vapi.Struct {
	return vapi.NewStruct("com.vmware.cis.tagging.category_model", map[string]interface{}{"id": c.ID,
		"name": c.Name, "description": c.Description, "cardinality": c.Cardinality,
		"associable_types": c.AssociableTypes, "used_by": c.UsedBy})
}

func tagValue(t *Tag) vapi.Struct {
	return vapi.NewStruct("com.vmware.cis.tagging.tag_model", map[string]interface{}{"id": t.ID,
		"category_id": t.CategoryID, "name": t.Name, "description": t.Description, "used_by": t.UsedBy})
}

func objectValue(o ObjectID) vapi.Struct {
	return vapi.NewStruct("com.vmware.vapi.std.dynamic_ID", map[string]interface{}{"type": o.Type, "id": o.ID})
}

func objectValues(objects []ObjectID) []interface{} {
	out := []interface{}{}
	for _, o := range objects {
		out = append(out, objectValue(o))
	}
	return out
}

func batchValue(r BatchResult) vapi.Struct {
	messages := []interface{}{}
	for _, m := range r.ErrorMessages {
		messages = append(messages, vapi.Localizable(m))
	}
	return vapi.NewStruct("com.vmware.cis.tagging.tag_association.batch_result", map[string]interface{}{
		"success": r.Success, "error_messages": messages})
}
