package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/store"
)

// timeline reads session id's whole timeline a page at a time, as a
// front end that shows all of it does.
func timeline(ctx context.Context, m *Manager, id string) ([]Event, error) {
	var out []Event
	var after int64
	for {
		p, err := m.Timeline(ctx, id, after, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Events...)
		if !p.More {
			return out, nil
		}
		after = p.Events[len(p.Events)-1].Seq
	}
}

// TestConsoleFlood records thousands of long refused console lines, each
// with a secret near its start and a refusal that quotes the whole line,
// as a learner who pastes the same long text again and again does: the
// store keeps at most the bound of each event, the secret masked, the
// refusal and the message a marked prefix; a read of the timeline returns
// one page, however much the learner wrote, and says more follows.
func TestConsoleFlood(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	f.seed(t, "flood", "failover", InExercise, 0, nil)
	const lines, lineBytes = 2000, 16 << 10
	secret := "s3cr3t-hunter2-value"
	var written int
	for i := range lines {
		line := fmt.Sprintf("kubectl create secret generic db --from-literal=password=%s %05d %s", secret, i, strings.Repeat("y", lineBytes))
		d := ConsoleData{Line: line, ExitCode: -1, Refused: fmt.Sprintf("unknown subcommand %q for kubectl create: see kubectl create --help", line)}
		if err := f.m.RecordConsole(ctx, "flood", d); err != nil {
			t.Fatal(err)
		}
		written += len(d.Line) + len(d.Refused)
	}

	var stored, n int
	var after int64
	for {
		evs, err := f.store.Events(ctx, "flood", after, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			n++
			stored += len(ev.Message) + len(ev.Data)
			var d ConsoleData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			if len(ev.Message) > ConsoleQuote+ConsoleRefusal+64 || len(d.Line) > store.MaxEventText || len(d.Refused) > ConsoleRefusal {
				t.Fatalf("event %d: message %d, line %d, refusal %d bytes; want at most %d, %d, %d",
					ev.Seq, len(ev.Message), len(d.Line), len(d.Refused), ConsoleQuote+ConsoleRefusal+64, store.MaxEventText, ConsoleRefusal)
			}
			if !strings.HasSuffix(d.Line, store.Ellipsis) || !strings.HasSuffix(d.Refused, store.Ellipsis) || !strings.Contains(ev.Message, store.Ellipsis+" (refused: unknown subcommand") {
				t.Fatalf("event %d: the cuts are not marked: line ends %q, refusal ends %q, message %.400q",
					ev.Seq, tail(d.Line), tail(d.Refused), ev.Message)
			}
			if strings.Contains(ev.Message+string(ev.Data), secret) || !strings.Contains(d.Line, "password=***") {
				t.Fatalf("event %d: the secret is not masked: %.300q", ev.Seq, ev.Message)
			}
		}
		after = evs[len(evs)-1].Seq
	}
	if n != lines {
		t.Fatalf("stored %d events, want %d", n, lines)
	}
	// The line once, the quote of it once and the refusal twice (in the
	// message and the data), with room for JSON's quoting.
	if per := store.MaxEventText + ConsoleQuote + 2*ConsoleRefusal + 512; stored > lines*per {
		t.Errorf("the store holds %d bytes of %d console lines, want at most %d a line", stored, lines, per)
	}
	t.Logf("%d lines: %d MiB written, %d KiB stored", lines, written>>20, stored>>10)

	p, err := f.m.Timeline(ctx, "flood", 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != MaxTimelinePage || !p.More {
		t.Errorf("a read of the whole timeline: got %d events (more: %t), want one page of %d and more to follow", len(p.Events), p.More, MaxTimelinePage)
	}
	last, err := f.m.Timeline(ctx, "flood", p.Events[len(p.Events)-1].Seq+int64(lines-MaxTimelinePage-10), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Events) != 10 || last.More {
		t.Errorf("the last page: got %d events (more: %t), want the last 10 and no more", len(last.Events), last.More)
	}
	end, older, err := f.m.TimelineEnd(ctx, "flood", 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(end) != 50 || older != lines-50 || end[49].Seq != last.Events[9].Seq {
		t.Errorf("the timeline's end: got %d events and %d older, want the newest 50 and %d older", len(end), older, lines-50)
	}
}

func tail(s string) string { return s[max(len(s)-12, 0):] }
