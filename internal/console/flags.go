package console

import (
	"fmt"
	"strings"
)

// flagKind says how a flag takes its value, as pflag parses it.
type flagKind int

const (
	boolFlag  flagKind = iota // --x, --x=false; -x
	valueFlag                 // --x v, --x=v; -x v, -xv
	optFlag                   // --x or --x=v, never the next word (pflag's NoOptDefVal)
)

type flagSpec struct {
	long, short string
	kind        flagKind
}

// flagSet is the flags a command accepts, by long name and by shorthand.
type flagSet struct {
	long  map[string]flagSpec
	short map[string]flagSpec
}

// parseFlags reads a compact list of flag specs: "s|long=" takes a value,
// "long?" takes one only as --long=v, "long" is a boolean. Sets may be
// merged; later specs win.
func parseFlags(specs ...string) flagSet {
	fs := flagSet{long: map[string]flagSpec{}, short: map[string]flagSpec{}}
	for _, spec := range specs {
		for _, f := range strings.Fields(spec) {
			var s flagSpec
			switch {
			case strings.HasSuffix(f, "="):
				s.kind, f = valueFlag, strings.TrimSuffix(f, "=")
			case strings.HasSuffix(f, "?"):
				s.kind, f = optFlag, strings.TrimSuffix(f, "?")
			}
			if short, long, ok := strings.Cut(f, "|"); ok {
				s.short, f = short, long
			}
			s.long = f
			fs.long[s.long] = s
			if s.short != "" {
				fs.short[s.short] = s
			}
		}
	}
	return fs
}

// flag is one flag as typed: its spec, the value it carries, and the
// spelling for messages.
type flag struct {
	spec     flagSpec
	value    string
	hasValue bool
	typed    string
	known    bool // matched a spec of the sets it was read against
}

// readFlag reads the flag at args[0] against the given sets, tried in
// order, and returns the flags it holds (combined shorthands hold several)
// and how many words it used. An unknown flag is returned with a zero spec.
func readFlag(args []string, sets ...flagSet) ([]flag, int) {
	arg := args[0]
	if strings.HasPrefix(arg, "--") {
		name, value, hasValue := strings.Cut(arg[2:], "=")
		spec, ok := lookup(sets, name, false)
		if !ok {
			return []flag{{spec: flagSpec{long: name}, value: value, hasValue: hasValue, typed: "--" + name}}, 1
		}
		f := flag{spec: spec, value: value, hasValue: hasValue, typed: "--" + name, known: true}
		if spec.kind == valueFlag && !hasValue && len(args) > 1 {
			f.value, f.hasValue = args[1], true
			return []flag{f}, 2
		}
		return []flag{f}, 1
	}
	// Shorthands: -abc is -a -b -c while they are booleans; the first that
	// takes a value takes the rest of the word (-nfoo, -n=foo) or the next.
	var out []flag
	rest := arg[1:]
	for rest != "" {
		name := rest[:1]
		rest = rest[1:]
		spec, ok := lookup(sets, name, true)
		f := flag{spec: spec, typed: "-" + name, known: ok}
		if !ok {
			f.spec = flagSpec{short: name}
			return append(out, f), 1
		}
		if strings.HasPrefix(rest, "=") {
			f.value, f.hasValue = rest[1:], true
			return append(out, f), 1
		}
		if spec.kind == valueFlag {
			switch {
			case rest != "":
				f.value, f.hasValue = rest, true
			case len(args) > 1:
				f.value, f.hasValue = args[1], true
				return append(out, f), 2
			}
			return append(out, f), 1
		}
		out = append(out, f)
	}
	return out, 1
}

func lookup(sets []flagSet, name string, short bool) (flagSpec, bool) {
	for _, fs := range sets {
		m := fs.long
		if short {
			m = fs.short
		}
		if s, ok := m[name]; ok {
			return s, true
		}
	}
	return flagSpec{}, false
}

func (f flag) name() string {
	if f.spec.long != "" {
		return f.spec.long
	}
	return f.spec.short
}

func (f flag) String() string {
	if f.hasValue {
		return fmt.Sprintf("%s=%s", f.typed, f.value)
	}
	return f.typed
}
