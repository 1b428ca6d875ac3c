package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Doc is a parsed YAML document and the file it came from.
type Doc struct {
	File string
	Root *yaml.Node // the document's top-level value
}

// Parse parses exactly one YAML document whose top level is a mapping.
func Parse(file string, data []byte) (doc *Doc, err error) {
	defer func() {
		// The YAML library is third-party code; a panic in it on a
		// malformed file must still reach the author as an error.
		if r := recover(); r != nil {
			doc, err = nil, &Error{File: file, Msg: fmt.Sprintf("malformed yaml: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "empty document"}
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, syntaxError(file, err)
		}
		return nil, &Error{File: file, Line: line, Msg: "more than one yaml document"}
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 {
		return nil, &Error{File: file, Msg: "empty document"}
	}
	root := n.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Msg: "top level must be a mapping"}
	}
	return &Doc{File: file, Root: root}, nil
}

// valueRE finds the offending value the YAML library quotes in backticks.
var valueRE = regexp.MustCompile("`([^`]*)`")

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func syntaxError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: m[2]}
	}
	return &Error{File: file, Msg: msg}
}

// Decode decodes the whole document into out, strictly. See DecodeNode.
func (d *Doc) Decode(out any) []error {
	return d.DecodeNode(d.Root, "", out)
}

// DecodeNode decodes node (found at path) into out, a pointer. Every mapping
// key must name a field of the target type; every unknown key is reported
// with its line and full path, then type errors from the YAML library are
// reported with their lines. Nothing is decoded when a key is unknown.
func (d *Doc) DecodeNode(node *yaml.Node, path string, out any) (errs []error) {
	defer func() {
		if r := recover(); r != nil {
			errs = append(errs, &Error{File: d.File, Line: node.Line, Path: path, Msg: fmt.Sprintf("cannot decode: %v", r)})
		}
	}()
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer {
		return []error{fmt.Errorf("decode %s: target must be a pointer", d.File)}
	}
	errs = d.checkKnown(node, path, t.Elem(), 0)
	if len(errs) > 0 {
		return errs
	}
	if err := node.Decode(out); err != nil {
		return d.decodeErrors(path, err)
	}
	return nil
}

func (d *Doc) decodeErrors(path string, err error) []error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		e := syntaxError(d.File, err)
		e.Path = path
		return []error{e}
	}
	out := make([]error, 0, len(te.Errors))
	for _, s := range te.Errors {
		e := &Error{File: d.File, Msg: s}
		if m := lineRE.FindStringSubmatch(s); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = m[2]
			value := ""
			if v := valueRE.FindStringSubmatch(e.Msg); v != nil {
				value = v[1]
			}
			e.Path = d.PathAt(e.Line, value)
		}
		out = append(out, e)
	}
	return out
}
