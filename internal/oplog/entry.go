package oplog

import (
	"strings"
	"time"
)

// Entry is one line of the operator's log, parsed for a reader: when, how
// severe, about which object, what happened. Raw is the line as written.
type Entry struct {
	Time    time.Time `json:"time"`
	Stream  string    `json:"stream,omitempty"`
	Level   string    `json:"level,omitempty"`  // debug, info, warn or error; empty when the line has none
	Object  string    `json:"object,omitempty"` // namespace/name (or name) of the object reconciled
	Message string    `json:"message"`
	Error   string    `json:"error,omitempty"`
	// Fields holds the line's other key/value pairs (controller, did,
	// differs, took...).
	Fields map[string]string `json:"fields,omitempty"`
	// Pass is the reconcile pass the line records, when it is one: what
	// was read, what differed, what was done (taken out of Fields).
	Pass *Pass  `json:"pass,omitempty"`
	Raw  string `json:"raw"`
}

// Levels of an Entry.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// ParseEntry parses a whole line of the operator's output. The line's own
// time is used when it has one, else the CRI record's.
func ParseEntry(l Line) Entry {
	e := ParseText(l.Text, l.Time)
	e.Stream = l.Stream
	if e.Time.IsZero() {
		e.Time = l.Time
	}
	return e
}

// ParseText parses the text of one line as the operator or its libraries
// write it: slog JSON or text (the operator's own logger), zap JSON or
// console (controller-runtime's default), klog (client-go), logrus text or
// JSON (Zalando's postgres-operator, Spotahome's redis-operator: see
// other.go), or else plain text, which becomes the message. A reconcile
// pass of the reference operator also gets its Pass. around dates a klog line, which has no
// year; it may be zero.
func ParseText(text string, around time.Time) Entry {
	e := Entry{Raw: text}
	trimmed := strings.TrimSpace(text)
	ok := false
	switch {
	case strings.HasPrefix(trimmed, "{"):
		ok = parseJSON(trimmed, &e)
	case strings.Contains(trimmed, "\t"):
		ok = parseZapConsole(trimmed, &e)
	case isKlog(trimmed):
		ok = parseKlog(trimmed, around, &e)
	}
	if !ok {
		ok = parseLogfmt(trimmed, &e)
	}
	if !ok {
		return Entry{Raw: text, Message: trimmed}
	}
	e.Pass = passOf(&e)
	return e
}

// normLevel maps the level names of slog, zap, logr and klog to the four of
// an Entry.
func normLevel(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "":
		return ""
	case strings.HasPrefix(s, "debug"), strings.HasPrefix(s, "level("), strings.HasPrefix(s, "-"), s == "trace":
		return LevelDebug // slog DEBUG-4, zap Level(-2) and logr V-levels
	case strings.HasPrefix(s, "info"):
		return LevelInfo
	case strings.HasPrefix(s, "warn"):
		return LevelWarn
	case strings.HasPrefix(s, "err"), s == "dpanic", s == "panic", s == "fatal", s == "critical":
		return LevelError
	}
	return s
}

// fill sets e's fields from the key/value pairs of a structured line.
func (e *Entry) fill(kv map[string]string, objects map[string][2]string) {
	for k, v := range kv {
		switch k {
		case "time", "ts", "timestamp":
			if t, ok := parseTime(v); ok {
				e.Time = t
				continue
			}
		case "level", "severity":
			e.Level = normLevel(v)
			continue
		case "msg", "message":
			e.Message = v
			continue
		case "error", "err":
			e.Error = v
			continue
		}
		if e.Fields == nil {
			e.Fields = map[string]string{}
		}
		e.Fields[k] = v
	}
	e.Object = object(kv, objects)
	if e.Object != "" {
		delete(e.Fields, "namespace")
		delete(e.Fields, "name")
	} else if obj, used := otherObject(kv); obj != "" {
		e.Object = obj
		for _, k := range used {
			delete(e.Fields, k)
		}
	}
	if len(e.Fields) == 0 {
		e.Fields = nil
	}
}

// object names the object a line is about: controller-runtime's namespace
// and name keys, else a group of them ({"PostgresCluster": {"name": ...}}).
func object(kv map[string]string, groups map[string][2]string) string {
	if n := kv["name"]; n != "" {
		if ns := kv["namespace"]; ns != "" {
			return ns + "/" + n
		}
		return n
	}
	for _, nn := range groups {
		if nn[1] == "" {
			continue
		}
		if nn[0] != "" {
			return nn[0] + "/" + nn[1]
		}
		return nn[1]
	}
	return ""
}

func parseTime(v string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	// zap's epoch seconds with a fraction.
	if f, ok := parseFloat(v); ok && f > 1e9 {
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), true
	}
	return time.Time{}, false
}
