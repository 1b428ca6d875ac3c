package jsonconv

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// SampleDuration is the duration Check puts in every duration field:
// 1234.5678 ms, which a Duration writes as SampleMillis. In nanoseconds
// or seconds it reads as another number.
const (
	SampleDuration = 1234567800 * time.Nanosecond
	SampleMillis   = 1235
)

var (
	durationType  = reflect.TypeFor[time.Duration]()
	viewDuration  = reflect.TypeFor[Duration]()
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	sampleTime    = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	camelCase     = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
)

// Check reports every way the JSON of v's type, and of each struct type it
// holds, breaks the convention. It reads each struct's fields (their keys,
// and the Go types behind them) and, since a type may write its own JSON,
// the JSON of a sample of it with every field set:
//   - every key is camelCase, and none ends in Ns;
//   - a duration is a Duration, never a time.Duration (which JSON writes
//     in nanoseconds); its key ends in Ms and its sample is written as
//     SampleMillis; a key that ends in Ms holds an integer;
//   - an instant is an RFC 3339 string;
//   - an id ("id", or a key ending in Id) is a string.
//
// A type with a MarshalJSON (for another reason than its durations) may
// tag its fields with the keys it writes (best: the reader sees the key
// beside the field) or write another struct; its untagged fields are then
// checked by their JSON alone: as many keys ending in Ms written as
// SampleMillis as it has durations.
// Only a value-receiver MarshalJSON counts: a pointer's is skipped where
// the value is not addressable (a struct field, a map's value).
func Check(v any) []error {
	c := &checker{seen: map[reflect.Type]bool{}}
	c.walk(reflect.TypeOf(v))
	return c.errs
}

type checker struct {
	seen map[reflect.Type]bool
	errs []error
}

func (c *checker) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// walk checks t, if it is a struct, and every struct type it holds.
func (c *checker) walk(t reflect.Type) {
	if t == nil {
		return
	}
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem() // a map's keys are data, not names
			continue
		}
		break
	}
	if t.Kind() != reflect.Struct || t == timeType || c.seen[t] {
		return
	}
	c.seen[t] = true
	fs := fields(t, t.String())
	own := t.Implements(marshalerType) // its JSON need not be its fields'
	for _, f := range fs {
		if holds(f.typ, durationType) {
			c.errorf("%s: holds a time.Duration, which JSON writes in nanoseconds: make it a jsonconv.Duration under a key ending in Ms", f.path)
			continue
		}
		if f.tagged || !own {
			c.field(f)
		}
	}
	c.sample(t, fs, own)
	for _, f := range fs {
		c.walk(f.typ)
	}
}

// field is a struct field as encoding/json writes it.
type field struct {
	path string // Type.Field, for messages
	key  string
	typ  reflect.Type
	// tagged: the key is the field's json tag, not its Go name.
	tagged bool
}

// fields lists t's fields by their JSON keys, the fields of an embedded
// struct without a key of its own promoted, as encoding/json does.
func fields(t reflect.Type, path string) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		key, _, _ := strings.Cut(tag, ",")
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if key == "" && ft.Kind() == reflect.Struct {
				out = append(out, fields(ft, path+"."+f.Name)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		tagged := key != ""
		if !tagged {
			key = f.Name
		}
		out = append(out, field{path: path + "." + f.Name, key: key, typ: f.Type, tagged: tagged})
	}
	return out
}

// isDuration reports whether t is a Duration, or holds Durations directly.
func isDuration(t reflect.Type) bool { return holds(t, viewDuration) }

// holds reports whether t is d, or a pointer to, list or array of d.
func holds(t, d reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return t.Elem() == d
	}
	return t == d
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// field checks a field's key against the Go type behind it.
func (c *checker) field(f field) {
	c.key(f.path, f.key)
	switch {
	case isDuration(f.typ) && !strings.HasSuffix(f.key, "Ms"):
		c.errorf("%s: key %q holds a duration: name it ...Ms", f.path, f.key)
	case strings.HasSuffix(f.key, "Ms") && !isInteger(f.typ):
		c.errorf("%s: key %q ends in Ms but holds %s, not whole milliseconds", f.path, f.key, f.typ)
	case (f.key == "id" || strings.HasSuffix(f.key, "Id")) && f.typ.Kind() != reflect.String:
		c.errorf("%s: key %q is an id but holds %s, not a string", f.path, f.key, f.typ)
	}
}

// key checks a JSON key's spelling.
func (c *checker) key(path, key string) {
	switch {
	case !camelCase.MatchString(key):
		c.errorf("%s: key %q is not camelCase", path, key)
	case strings.HasSuffix(key, "Ns"):
		c.errorf("%s: key %q is in nanoseconds: write whole milliseconds in a key ending in Ms", path, key)
	}
}

// sample checks the JSON a value of t with every field set is written as:
// its keys, its durations and its instants. own says t writes its JSON
// itself, so an untagged field's key is not known.
func (c *checker) sample(t reflect.Type, fs []field, own bool) {
	v := reflect.New(t).Elem()
	fill(v, 0)
	b, err := json.Marshal(v.Interface())
	if err != nil {
		c.errorf("%s: write a sample: %v", t, err)
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return // not an object (a type written as a string): no keys
	}
	for k := range obj {
		c.key(t.String(), k)
	}
	claimed := map[string]bool{}
	var untagged []string // durations written under keys not known
	for _, f := range fs {
		if own && !f.tagged {
			if isDuration(f.typ) {
				untagged = append(untagged, f.path)
			}
			continue
		}
		raw, ok := obj[f.key]
		claimed[f.key] = true
		switch {
		case isDuration(f.typ) && !ok:
			c.errorf("%s: key %q is missing from the JSON of a sample that sets it", f.path, f.key)
		case isDuration(f.typ) && !allMillis(raw):
			c.errorf("%s: key %q is written as %s for %v: want %d (whole milliseconds)", f.path, f.key, raw, SampleDuration, SampleMillis)
		case f.typ == timeType && ok && !rfc3339(raw):
			c.errorf("%s: key %q is written as %s: want an RFC 3339 string", f.path, f.key, raw)
		}
	}
	if len(untagged) == 0 {
		return
	}
	n := 0
	for k, raw := range obj {
		if !claimed[k] && strings.HasSuffix(k, "Ms") && allMillis(raw) {
			n++
		}
	}
	if n < len(untagged) {
		c.errorf("%s: %d durations (%s) but %d keys ending in Ms written as %d: write each in whole milliseconds, or tag it with its key",
			t, len(untagged), strings.Join(untagged, ", "), n, SampleMillis)
	}
}

// allMillis reports whether raw is SampleMillis, or a list of nothing else.
func allMillis(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	for _, x := range list {
		if n, ok := x.(float64); !ok || n != SampleMillis {
			return false
		}
	}
	return len(list) > 0
}

func rfc3339(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// fill sets every field v holds that can be set to a value that is not
// empty, so that no omitempty key stays out: durations (a Duration, or a
// time.Duration) to SampleDuration,
// instants to a fixed time, one element in each slice and map. Raw bytes
// (json.RawMessage) and interfaces stay empty: any value would be a guess.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return // a type that holds itself: deep enough
	}
	t := v.Type()
	switch t {
	case durationType, viewDuration:
		v.SetInt(int64(SampleDuration))
		return
	case timeType:
		v.Set(reflect.ValueOf(sampleTime))
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return
		}
		s := reflect.MakeSlice(t, 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMapWithSize(t, 1)
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f, depth+1)
			}
		}
	}
}
