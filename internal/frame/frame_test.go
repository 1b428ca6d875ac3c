package frame

import (
	"encoding/json"
	"testing"

	"oplab.dev/oplab/internal/jsonconv"
)

// TestJSONConvention: the frame, as the browser reads it, keeps
// docs/api.md's convention (see jsonconv.Check).
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, err := range jsonconv.Check(Frame{}) {
		t.Errorf("Frame: %v", err)
	}
}

// TestJSON: each kind of frame as api.js reads it.
func TestJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    Frame
		want string
	}{
		{Data(3, "", json.RawMessage(`{"a":1}`)), `{"seq":3,"type":"data","data":{"a":1}}`},
		{Data(4, "0042", json.RawMessage(`1`)), `{"seq":4,"type":"data","cursor":"0042","data":1}`},
		{Frame{Seq: 12, Type: TypeGap, Skipped: 2}, `{"seq":12,"type":"gap","skipped":2}`},
		{Frame{Seq: 9, Type: TypeHello, Epoch: "ab12"}, `{"seq":9,"type":"hello","epoch":"ab12"}`},
		{Frame{Seq: 9, Type: TypeHello, Epoch: "ab12", Resumed: true}, `{"seq":9,"type":"hello","epoch":"ab12","resumed":true}`},
	}
	for _, tt := range tests {
		got, err := tt.f.MarshalJSON()
		if err != nil || string(got) != tt.want {
			t.Errorf("got %s, %v; want %s", got, err, tt.want)
		}
	}
}

// TestEncodeFollowsTags: the hand-written encoding is the one
// encoding/json makes from the struct's tags, with every field set and
// with none, so a field added to Frame without its place in encode fails
// here rather than in a browser.
func TestEncodeFollowsTags(t *testing.T) {
	t.Parallel()
	type plain Frame // Frame's fields and tags, without its MarshalJSON
	for _, f := range []Frame{
		{},
		{Seq: 7, Type: TypeHello, Epoch: "e1", Skipped: 3, Cursor: "2026-03-04T09:30:00.000000000Z", Resumed: true, Data: json.RawMessage(`{"message":"reconciled"}`)},
	} {
		want, err := json.Marshal(plain(f))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.encode(); string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// TestStringsStayJSON: a cursor with a control character, non-ASCII text
// or invalid UTF-8 still makes a frame a browser can parse (Go's quoting
// alone writes \x01, which JSON has not).
func TestStringsStayJSON(t *testing.T) {
	t.Parallel()
	for _, cursor := range []string{"a\x01b", "시간 09:30", "tab\there", "bad \xff byte", `quote " and \ slash`} {
		b, _ := Data(1, cursor, json.RawMessage(`1`)).MarshalJSON()
		var back Frame
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("cursor %q: %s is not JSON: %v", cursor, b, err)
			continue
		}
		if want := string([]rune(cursor)); back.Cursor != want { // invalid UTF-8 reads back as U+FFFD
			t.Errorf("cursor %q: read back %q, want %q", cursor, back.Cursor, want)
		}
	}
}

// TestDataEncodedOnce: every MarshalJSON of a data frame returns the bytes
// Data made, not a new encoding: what each subscriber's connection writes.
func TestDataEncodedOnce(t *testing.T) {
	t.Parallel()
	f := Data(5, "c", json.RawMessage(`"line"`))
	a, _ := f.MarshalJSON()
	copied := f // frames are passed by value, through the ring and channels
	b, _ := copied.MarshalJSON()
	if &a[0] != &b[0] {
		t.Error("two MarshalJSON of one data frame made two encodings, want the one Data made")
	}
}
