package stream

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
	// in the ring and will not come.
	TypeGap = "gap"
)

// Frame is one message of a subscription, as it goes to a client in JSON.
type Frame struct {
	Seq     uint64 `json:"seq"`
	Type    string `json:"type"`
	Epoch   string `json:"epoch,omitempty"`
	Skipped uint64 `json:"skipped,omitempty"`
	// Cursor is a data frame's place in its source (see Emit).
	Cursor string `json:"cursor,omitempty"`
	// Resumed, on a hello, says the frames continue after the client's
	// cursor although the epoch is new.
	Resumed bool            `json:"resumed,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`

	enc []byte // the frame's JSON, made once for every subscriber
}

// size is the bytes a frame kept in a ring holds: its data, its cursor
// and its encoding.
func (f Frame) size() int { return len(f.Data) + len(f.Cursor) + len(f.enc) }

// MarshalJSON returns the frame's encoding; a data frame's is made once,
// when it is published, however many subscribers send it.
func (f Frame) MarshalJSON() ([]byte, error) {
	if f.enc != nil {
		return f.enc, nil
	}
	return f.encode(), nil
}

// encode writes the frame by hand: it is on the path of every line to every
// viewer, and Data is already JSON.
func (f Frame) encode() []byte {
	b := make([]byte, 0, len(f.Data)+64)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, f.Seq, 10)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, f.Type)
	if f.Epoch != "" {
		b = append(b, `,"epoch":`...)
		b = strconv.AppendQuote(b, f.Epoch)
	}
	if f.Skipped != 0 {
		b = append(b, `,"skipped":`...)
		b = strconv.AppendUint(b, f.Skipped, 10)
	}
	if f.Cursor != "" {
		b = append(b, `,"cursor":`...)
		b = strconv.AppendQuote(b, f.Cursor)
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
