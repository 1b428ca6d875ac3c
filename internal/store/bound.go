package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// What one timeline event may store. Whatever reaches an event (a console
// line, a quiz answer, an error the API server returned about a learner's
// object, a log line that unlocked a hint) is cut here, below every caller
// and every front end, so that each event costs the store and every reader
// of the timeline a bounded amount, whatever the learner typed or made.
const (
	// MaxEventText bounds each text of an event, in bytes: its kind,
	// exercise and message, and every string in its data.
	MaxEventText = 2 << 10
	// MaxEventData bounds an event's data as a whole, in bytes: the
	// strings in a larger one are cut shorter until it fits.
	MaxEventData = 16 << 10
	// minEventText is the shortest the strings of an event's data are cut
	// to before its data is left out altogether.
	minEventText = 64
)

// Ellipsis marks a text that was cut.
const Ellipsis = "…"

// Cut returns s if it is at most max bytes long, else its longest prefix
// that ends on a whole character and, with Ellipsis after it, fits in max
// (max is at least len(Ellipsis)).
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max - len(Ellipsis)
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + Ellipsis
}

// bound cuts ev's texts and data to what an event may store (MaxEventText,
// MaxEventData), in place: the caller then holds what was stored.
func bound(ev *Event) {
	ev.Kind, ev.Exercise = Cut(ev.Kind, MaxEventText), Cut(ev.Exercise, MaxEventText)
	data, dropped := boundData(ev.Data)
	msg := ev.Message
	if dropped > 0 {
		msg = fmt.Sprintf("%s (%d bytes of detail left out)", msg, dropped)
	}
	ev.Message, ev.Data = Cut(msg, MaxEventText), data
}

// boundData returns data with every string in it cut to MaxEventText
// bytes, and shorter while the whole is over MaxEventData; when even
// strings of minEventText leave it over, it returns {} and how many bytes
// were left out.
func boundData(data []byte) ([]byte, int) {
	if len(data) <= MaxEventText {
		return data, 0 // no string in it can be longer
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers as they were written
	if err := dec.Decode(&v); err != nil {
		if len(data) <= MaxEventData {
			return data, 0 // not JSON: kept as given, since it fits
		}
		return []byte("{}"), len(data)
	}
	for limit := MaxEventText; limit >= minEventText; limit /= 2 {
		out, err := encodeJSON(cutStrings(v, limit))
		if err == nil && len(out) <= MaxEventData {
			return out, 0
		}
	}
	return []byte("{}"), len(data)
}

// cutStrings returns a copy of the decoded JSON value v with each string
// (values and keys) cut to limit bytes.
func cutStrings(v any, limit int) any {
	switch v := v.(type) {
	case string:
		return Cut(v, limit)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cutStrings(e, limit)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[Cut(k, limit)] = cutStrings(e, limit)
		}
		return out
	}
	return v
}

// encodeJSON encodes v without escaping <, > and &, which would make a cut
// text longer again.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
