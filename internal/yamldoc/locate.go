package yamldoc

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Errorf returns an *Error for the field at path, on the line of the deepest
// part of path that exists in the document (the field itself when present,
// else its parent, so a missing required field points at its parent).
func (d *Doc) Errorf(path, format string, args ...any) *Error {
	line := 0
	if d != nil && d.Root != nil {
		line = d.Line(path)
	}
	file := ""
	if d != nil {
		file = d.File
	}
	return &Error{File: file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Line returns the line of the deepest existing node along path.
func (d *Doc) Line(path string) int {
	n := d.Root
	line := n.Line
	for _, step := range splitPath(path) {
		var key *yaml.Node
		n, key = childKey(n, step)
		if n == nil {
			break
		}
		line = n.Line
		if key != nil {
			line = key.Line // a field's own line, also for block values
		}
	}
	return line
}

// Lookup returns the node at path, or nil.
func (d *Doc) Lookup(path string) *yaml.Node {
	n := d.Root
	for _, step := range splitPath(path) {
		if n = child(n, step); n == nil {
			return nil
		}
	}
	return n
}

func child(n *yaml.Node, step string) *yaml.Node {
	v, _ := childKey(n, step)
	return v
}

// childKey returns the child at step and, for a mapping, its key node.
func childKey(n *yaml.Node, step string) (*yaml.Node, *yaml.Node) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if i, err := strconv.Atoi(step); err == nil && n.Kind == yaml.SequenceNode {
		if i >= 0 && i < len(n.Content) {
			return n.Content[i], nil
		}
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == step {
			return n.Content[i+1], n.Content[i]
		}
	}
	return nil, nil
}

// splitPath turns "a.b[2].c" into ["a", "b", "2", "c"].
func splitPath(path string) []string {
	if path == "" {
		return nil
	}
	path = strings.ReplaceAll(path, "[", ".")
	path = strings.ReplaceAll(path, "]", "")
	return strings.Split(path, ".")
}

// PathAt returns the path of the node on line that best explains an error
// there: the scalar holding value when one does, else the first key or
// scalar on the line; "" when nothing starts on line.
func (d *Doc) PathAt(line int, value string) string {
	var first, exact string
	walk(d.Root, "", 0, func(p string, n *yaml.Node, key *yaml.Node) {
		onLine := n.Line == line && n.Kind == yaml.ScalarNode || key != nil && key.Line == line
		if !onLine {
			return
		}
		if first == "" {
			first = p
		}
		if exact == "" && value != "" && n.Kind == yaml.ScalarNode && n.Value == value {
			exact = p
		}
	})
	if exact != "" {
		return exact
	}
	return first
}

// walk calls fn for every node under n in document order with its path and,
// for mapping values, its key.
func walk(n *yaml.Node, path string, depth int, fn func(string, *yaml.Node, *yaml.Node)) {
	if depth > maxDepth {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(path, n.Content[i].Value)
			fn(p, n.Content[i+1], n.Content[i])
			walk(n.Content[i+1], p, depth+1, fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			fn(p, c, nil)
			walk(c, p, depth+1, fn)
		}
	}
}
