package yamldoc

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	nodeType        = reflect.TypeOf(yaml.Node{})
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// maxDepth bounds the walk; real files are a few levels deep.
const maxDepth = 64

// checkKnown reports every mapping key under n that has no field in t.
func (d *Doc) checkKnown(n *yaml.Node, path string, t reflect.Type, depth int) []error {
	if depth > maxDepth {
		return []error{&Error{File: d.File, Line: n.Line, Path: path, Msg: "nested too deeply"}}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil
		}
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decoded by its own rules
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the YAML library reports the type mismatch
		}
		return d.checkStruct(n, path, t, depth)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		var errs []error
		for i, c := range n.Content {
			errs = append(errs, d.checkKnown(c, fmt.Sprintf("%s[%d]", path, i), t.Elem(), depth+1)...)
		}
		return errs
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, d.checkKnown(n.Content[i+1], join(path, n.Content[i].Value), t.Elem(), depth+1)...)
		}
		return errs
	}
	return nil
}

func (d *Doc) checkStruct(n *yaml.Node, path string, t reflect.Type, depth int) []error {
	fields := yamlFields(t)
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			errs = append(errs, &Error{File: d.File, Line: k.Line, Path: join(path, k.Value),
				Msg: fmt.Sprintf("unknown field %q (known: %s)", k.Value, known(fields))})
			continue
		}
		errs = append(errs, d.checkKnown(v, join(path, k.Value), ft, depth+1)...)
	}
	return errs
}

// yamlFields maps the YAML keys of struct t (with inlined structs) to types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func known(fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
