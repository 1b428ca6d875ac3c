package yamldoc

import (
	"strings"
	"testing"
)

type inner struct {
	Name string `yaml:"name"`
}

type outer struct {
	Items  []inner        `yaml:"items"`
	Meta   map[string]int `yaml:"meta"`
	Wait   Duration       `yaml:"wait"`
	Inline inline         `yaml:",inline"`
}

type inline struct {
	Extra string `yaml:"extra"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string // "" means success
	}{
		{"ok", "items:\n- name: a\nmeta: {x: 1}\nwait: 2s\nextra: e\n", ""},
		{"empty", "", "f.yaml: empty document"},
		{"top sequence", "- a\n", "f.yaml:1: top level must be a mapping"},
		{"two documents", "a: 1\n---\nb: 2\n", "f.yaml:2: more than one yaml document"},
		{"unknown nested", "items:\n- name: a\n  nmae: b\n", `f.yaml:3: items[0].nmae: unknown field "nmae" (known: name)`},
		{"unknown top", "extra: e\nextar: e\n", `f.yaml:2: extar: unknown field "extar" (known: extra, items, meta, wait)`},
		{"type error path", "meta: {x: 1, y: why}\n", "f.yaml:1: meta.y: cannot unmarshal !!str `why` into int"},
		{"bad duration", "wait: soon\n", `f.yaml:1: wait: invalid duration "soon"`},
		{"syntax", "items: [a\n", "f.yaml:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var errs []error
			doc, err := Parse("f.yaml", []byte(tt.src))
			if err != nil {
				errs = []error{err}
			} else {
				var out outer
				errs = doc.Decode(&out)
			}
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatalf("got %v, want no error", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tt.want) {
				t.Errorf("got %v, want an error starting %q", errs, tt.want)
			}
		})
	}
}

func TestErrorfLines(t *testing.T) {
	t.Parallel()
	doc, err := Parse("f.yaml", []byte("a:\n  b:\n  - x: 1\n  - x: 2\n    y: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		line int
	}{
		{"a", 1}, {"a.b", 2}, {"a.b[1]", 4}, {"a.b[1].y", 5}, {"a.b[1].z", 4}, {"a.b[9]", 2}, {"nope", 1},
	}
	for _, tt := range tests {
		if got := doc.Errorf(tt.path, "m").Line; got != tt.line {
			t.Errorf("%s: got line %d, want %d", tt.path, got, tt.line)
		}
	}
}
