package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a bit longer", 10, "a bit l…"},
		{"한국어 텍스트", 10, "한국" + Ellipsis}, // never half a character
		{"abc", 2, Ellipsis},
	} {
		if got := Cut(c.in, c.max); got != c.want {
			t.Errorf("Cut(%q, %d): got %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// TestEventBound appends events whose texts and data are far over what an
// event may store: each is stored cut to MaxEventText per text and
// MaxEventData in all, as valid JSON of the same shape, and the caller's
// event holds what was stored. An event within the bounds is stored as
// given.
func TestEventBound(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		if err := s.CreateSession(ctx, newSession("a", "alice", "failover", "ready")); err != nil {
			t.Fatal(err)
		}
		huge := strings.Repeat("한", 1<<20/3) // a MiB, three bytes a character
		many := make([]string, 200)
		for i := range many {
			many[i] = fmt.Sprintf("%04d %s", i, strings.Repeat("x", 1000))
		}
		manyJSON, _ := json.Marshal(map[string]any{"answers": many})
		small := json.RawMessage(`{"line":"kubectl get pods","exitCode":0}`)
		evs := []*Event{
			{Kind: "console", Message: "$ " + huge, Data: mustJSON(t, map[string]any{"line": huge, "exitCode": 1, "nested": []any{huge}})},
			{Kind: "quiz", Message: "many answers", Data: manyJSON},
			{Kind: "odd", Message: "not JSON", Data: json.RawMessage(strings.Repeat("z", 2*MaxEventData))},
			{Kind: "console", Message: "$ kubectl get pods", Data: small},
		}
		if err := s.AppendEvents(ctx, "a", evs...); err != nil {
			t.Fatal(err)
		}
		got, err := s.Events(ctx, "a", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(evs) {
			t.Fatalf("stored %d events, want %d", len(got), len(evs))
		}
		for i, ev := range got {
			if len(ev.Message) > MaxEventText || !utf8.ValidString(ev.Message) {
				t.Errorf("event %d: message of %d bytes (valid UTF-8: %t), want at most %d", i, len(ev.Message), utf8.ValidString(ev.Message), MaxEventText)
			}
			if len(ev.Data) > MaxEventData {
				t.Errorf("event %d: data of %d bytes, want at most %d", i, len(ev.Data), MaxEventData)
			}
			if !json.Valid(ev.Data) {
				t.Errorf("event %d: data is not JSON: %.200s", i, ev.Data)
			}
			if ev.Message != evs[i].Message || string(ev.Data) != string(evs[i].Data) {
				t.Errorf("event %d: the caller's event differs from what was stored", i)
			}
		}

		var console struct {
			Line     string   `json:"line"`
			ExitCode int      `json:"exitCode"`
			Nested   []string `json:"nested"`
		}
		if err := json.Unmarshal(got[0].Data, &console); err != nil {
			t.Fatal(err)
		}
		if len(console.Line) > MaxEventText || !strings.HasSuffix(console.Line, Ellipsis) || !strings.HasPrefix(console.Line, "한한") ||
			console.ExitCode != 1 || len(console.Nested) != 1 || len(console.Nested[0]) > MaxEventText {
			t.Errorf("cut console data: got line of %d bytes, exit code %d, %d nested; want the line's start cut to %d bytes with %q, exit code 1, one nested",
				len(console.Line), console.ExitCode, len(console.Nested), MaxEventText, Ellipsis)
		}
		var quiz struct {
			Answers []string `json:"answers"`
		}
		if err := json.Unmarshal(got[1].Data, &quiz); err != nil {
			t.Fatal(err)
		}
		if len(quiz.Answers) != len(many) || !strings.HasPrefix(quiz.Answers[199], "0199 ") {
			t.Errorf("many answers: got %d, want all %d, each cut shorter", len(quiz.Answers), len(many))
		}
		if string(got[2].Data) != "{}" || !strings.Contains(got[2].Message, "left out") {
			t.Errorf("data over the bound that is not JSON: got %.40q, message %q; want {} and a message that says it was left out", got[2].Data, got[2].Message)
		}
		if string(got[3].Data) != string(small) || got[3].Message != "$ kubectl get pods" {
			t.Errorf("an event within the bounds: got %q %s, want it as given", got[3].Message, got[3].Data)
		}
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTimelineReads reads a long timeline in pages and by its cheap
// queries, none of which returns more than asked for.
func TestTimelineReads(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		if err := s.CreateSession(ctx, newSession("a", "alice", "failover", "ready")); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSession(ctx, newSession("b", "bob", "failover", "ready")); err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		var evs []*Event
		for i := range 1200 {
			ev := &Event{Kind: "console", Message: fmt.Sprintf("line %d", i), At: t0.Add(time.Duration(i) * time.Second)}
			if i%100 == 0 {
				ev.Kind, ev.Exercise = "hint", []string{"one", "two"}[i/100%2]
			}
			evs = append(evs, ev)
		}
		if err := s.AppendEvents(ctx, "a", evs...); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendEvents(ctx, "b", &Event{Kind: "hint", Exercise: "one", Message: "bob's"}); err != nil {
			t.Fatal(err)
		}

		var after int64
		var pages, total int
		for {
			page, err := s.Events(ctx, "a", after, 500)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 500 {
				t.Fatalf("page of %d events, want at most 500", len(page))
			}
			if len(page) == 0 {
				break
			}
			if page[0].Seq <= after {
				t.Fatalf("page starts at seq %d, want after %d", page[0].Seq, after)
			}
			pages, total, after = pages+1, total+len(page), page[len(page)-1].Seq
		}
		if pages != 3 || total != 1200 {
			t.Errorf("paged read: got %d events in %d pages, want 1200 in 3", total, pages)
		}
		if _, err := s.Events(ctx, "a", 0, 0); err == nil {
			t.Error("a page of 0 events: got nil error, want one that asks for a limit")
		}

		latest, err := s.LatestEvents(ctx, "a", EventFilter{}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(latest) != 3 || latest[0].Message != "line 1197" || latest[2].Message != "line 1199" {
			t.Errorf("the newest 3: got %v, want lines 1197 to 1199, oldest first", messages(latest))
		}
		last, ok, err := s.LastEvent(ctx, "a", EventFilter{})
		if err != nil || !ok || last.Message != "line 1199" || !last.At.Equal(t0.Add(1199*time.Second)) {
			t.Errorf("last event: got %q at %v (%t, %v), want line 1199", last.Message, last.At, ok, err)
		}
		hint, ok, err := s.LastEvent(ctx, "a", EventFilter{Kinds: []string{"hint"}})
		if err != nil || !ok || hint.Message != "line 1100" {
			t.Errorf("last hint: got %q (%t, %v), want line 1100", hint.Message, ok, err)
		}
		if _, ok, err := s.LastEvent(ctx, "a", EventFilter{Kinds: []string{"quiz"}}); ok || err != nil {
			t.Errorf("last quiz event of a session with none: got ok %t, %v; want none", ok, err)
		}
		since, err := s.LatestEvents(ctx, "a", EventFilter{Kinds: []string{"hint"}, Exercise: "two", Since: t0.Add(500 * time.Second)}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := messages(since); strings.Join(got, ",") != "line 500,line 700,line 900,line 1100" {
			t.Errorf("hints of exercise two since 500 s: got %v", got)
		}
		counts, err := s.CountEvents(ctx, "a", EventFilter{Kinds: []string{"hint"}})
		if err != nil {
			t.Fatal(err)
		}
		if counts["one"] != 6 || counts["two"] != 6 || len(counts) != 2 {
			t.Errorf("hints by exercise: got %v, want one:6 two:6", counts)
		}
		all, err := s.CountEvents(ctx, "a", EventFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if all[""] != 1188 {
			t.Errorf("events of no exercise: got %d, want 1188", all[""])
		}
	})
}

func messages(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Message
	}
	return out
}
