package lab

import (
	"sort"
	"time"
)

// KindSpec describes an action or check kind: its parameters and defaults.
// The engine that runs labs implements every registered kind.
type KindSpec struct {
	Name string
	Doc  string
	// New returns a pointer to a zero parameter struct for the kind.
	New func() any
	// Timeout is the default time budget.
	Timeout time.Duration
	// Passes is the default number of consecutive passes (checks only).
	Passes int
}

// Validator is implemented by parameter structs that check themselves.
type Validator interface {
	Validate() []FieldError
}

// FieldError is a parameter problem; Field is relative to params ("" for
// the whole mapping).
type FieldError struct {
	Field string
	Msg   string
}

func newSpec[T any](name, doc string, timeout time.Duration, passes int) KindSpec {
	return KindSpec{Name: name, Doc: doc, New: func() any { return new(T) }, Timeout: timeout, Passes: passes}
}

func index(specs []KindSpec) map[string]KindSpec {
	m := make(map[string]KindSpec, len(specs))
	for _, s := range specs {
		m[s.Name] = s
	}
	return m
}

var (
	actionKinds = index(actionSpecs())
	checkKinds  = index(checkSpecs())
)

// LookupAction returns the action kind called name.
func LookupAction(name string) (KindSpec, bool) { s, ok := actionKinds[name]; return s, ok }

// LookupCheck returns the check kind called name.
func LookupCheck(name string) (KindSpec, bool) { s, ok := checkKinds[name]; return s, ok }

// ActionKinds returns every action kind, sorted by name.
func ActionKinds() []KindSpec { return sorted(actionKinds) }

// CheckKinds returns every check kind, sorted by name.
func CheckKinds() []KindSpec { return sorted(checkKinds) }

func sorted(m map[string]KindSpec) []KindSpec {
	out := make([]KindSpec, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func names(m map[string]KindSpec) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
