// Package frame is a live stream's frame as it crosses to the browser:
// the one type that the stream hub (internal/stream) numbers and keeps,
// the application layer hands over (internal/app/webapp) and the web
// server writes to each WebSocket (internal/server), and whose JSON
// api.js reads (docs/api.md lists its keys).
//
// It is a package of its own, holding nothing but the frame, so that both
// the hub and the server may import it: the server may not import the
// stream package (see internal/server/imports_test.go). When each side
// had its own frame, the server marshalled every frame once per client;
// now a data frame's JSON is made once, when it is published (Data), and
// every connection writes those same bytes (MarshalJSON).
package frame

import (
	"encoding/json"
	"strconv"
)

// Frame types.
const (
	// TypeHello is the first frame of every subscription: the stream's
	// epoch and the number of its newest frame. A client whose stored epoch
	// differs lost its place (the upstream was restarted and numbering began
	// again): it clears what it shows before the frames that follow, unless
	// the hello says Resumed (the frames continue after its cursor).
	TypeHello = "hello"
	// TypeData carries one message of the upstream.
	TypeData = "data"
	// TypeGap says Skipped frames, up to and including Seq, are no longer
	// kept and will not come.
	TypeGap = "gap"
)

// Frame is one numbered message of a live stream, as it goes to a client
// in JSON.
type Frame struct {
	Seq  uint64 `json:"seq"`
	Type string `json:"type"`
	// Epoch, on a hello, names the running upstream: what Seq refers to.
	Epoch string `json:"epoch,omitempty"`
	// Skipped, on a gap, counts the frames lost.
	Skipped uint64 `json:"skipped,omitempty"`
	// Cursor is a data frame's place in its source, the same in every
	// process that reads it and growing in string order (a log line's
	// time), or "" when its source has no places.
	Cursor string `json:"cursor,omitempty"`
	// Resumed, on a hello, says the frames continue after the client's
	// cursor although the epoch is new.
	Resumed bool `json:"resumed,omitempty"`
	// Data is the upstream's message, JSON.
	Data json.RawMessage `json:"data,omitempty"`

	enc []byte // the frame's JSON, made once for every subscriber (Data)
}

// Data returns data frame seq carrying data, which must be valid JSON
// (kept, not copied), with its encoding made now: however many clients
// the frame goes to, MarshalJSON returns these bytes.
func Data(seq uint64, cursor string, data json.RawMessage) Frame {
	f := Frame{Seq: seq, Type: TypeData, Cursor: cursor, Data: data}
	f.enc = f.encode()
	return f
}

// MarshalJSON returns the frame's encoding: a data frame's, made by Data,
// is the same slice every time (not to be changed); another frame's (a
// hello, a gap: one subscriber's) is made on the call.
func (f Frame) MarshalJSON() ([]byte, error) {
	if f.enc != nil {
		return f.enc, nil
	}
	return f.encode(), nil
}

// encode writes the frame by hand, as encoding/json would with its tags:
// it is on the path of every line to every viewer, and Data is already
// JSON.
func (f Frame) encode() []byte {
	b := make([]byte, 0, len(f.Data)+64)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, f.Seq, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, f.Type)
	if f.Epoch != "" {
		b = append(b, `,"epoch":`...)
		b = appendString(b, f.Epoch)
	}
	if f.Skipped != 0 {
		b = append(b, `,"skipped":`...)
		b = strconv.AppendUint(b, f.Skipped, 10)
	}
	if f.Cursor != "" {
		b = append(b, `,"cursor":`...)
		b = appendString(b, f.Cursor)
	}
	if f.Resumed {
		b = append(b, `,"resumed":true`...)
	}
	if len(f.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, f.Data...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string. Go's quoting is JSON's for
// printable ASCII; anything else (a control character, which Go writes as
// \x01, or invalid UTF-8) goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	return strconv.AppendQuote(b, s)
}
