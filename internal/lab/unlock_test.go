package lab

import (
	"slices"
	"testing"
	"time"
)

func TestHintUnlock(t *testing.T) {
	t.Parallel()
	src := edit(t, readDemo(t), `when: [{log: "(?i)promot"}]`,
		`after: 5m
    when: [{log: "(?i)promot"}, {eventReason: FailingOver}, {eventMessage: "exceeded quota"}]`)
	l, errs := Parse("demo.yaml", src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	h := &l.Exercises[0].Hints[1]
	failing := Event{Reason: "FailingOver", Message: "primary prod-db-0 is missing: electing prod-db-1"}
	quota := Event{Reason: "FailedCreate", Message: `pods "prod-db-3" is forbidden: exceeded quota: pg-quota`}
	tests := []struct {
		name   string
		o      Observed
		want   Unlock
		wantOK bool
	}{
		{"time", Observed{Elapsed: 5 * time.Minute, Log: []string{"in sync"}},
			Unlock{Kind: UnlockTime, After: 5 * time.Minute}, true},
		{"log line", Observed{Elapsed: time.Second, Log: []string{"in sync", "PROMOTING prod-db-1"}},
			Unlock{Kind: UnlockLog, Pattern: "(?i)promot", Seen: "PROMOTING prod-db-1"}, true},
		{"event reason", Observed{Elapsed: time.Second, Events: []Event{{Reason: "Created"}, failing}},
			Unlock{Kind: UnlockEvent, Reason: "FailingOver", Seen: failing.Message}, true},
		{"event message", Observed{Elapsed: time.Second, Events: []Event{quota}},
			Unlock{Kind: UnlockMessage, Pattern: "exceeded quota", Seen: quota.Message}, true},
		{"evidence named before time", Observed{Elapsed: time.Hour, Events: []Event{failing}},
			Unlock{Kind: UnlockEvent, Reason: "FailingOver", Seen: failing.Message}, true},
		{"a log pattern does not match events", Observed{Elapsed: time.Second, Events: []Event{{Reason: "Promoted", Message: "promoted prod-db-1"}}},
			Unlock{}, false},
		{"nothing yet", Observed{Elapsed: 4 * time.Minute, Log: []string{"in sync"}}, Unlock{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := h.Unlock(tt.o)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
			if due := h.Due(tt.o); due != tt.wantOK {
				t.Errorf("due: got %v, want %v", due, tt.wantOK)
			}
		})
	}
}

func TestHintWait(t *testing.T) {
	t.Parallel()
	src := edit(t, readDemo(t), `when: [{log: "(?i)promot"}]`, `after: 5m
    when: [{log: "(?i)promot"}, {eventReason: FailingOver}]`)
	l, errs := Parse("demo.yaml", src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	hints := l.Exercises[0].Hints // nudge after 1m; command after 5m or on evidence
	tests := []struct {
		name     string
		hint     int
		o        Observed
		left     time.Duration
		due      bool
		patterns []string
	}{
		{"time left, no evidence to wait for", 0, Observed{Elapsed: 20 * time.Second}, 40 * time.Second, false, nil},
		{"time has come", 0, Observed{Elapsed: 2 * time.Minute}, 0, true, nil},
		{"time left or evidence", 1, Observed{Elapsed: time.Minute}, 4 * time.Minute, false, []string{"(?i)promot", "FailingOver"}},
		{"evidence seen already", 1, Observed{Elapsed: time.Minute, Log: []string{"promoted"}}, 4 * time.Minute, true, []string{"(?i)promot", "FailingOver"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := hints[tt.hint].Wait(tt.o)
			var patterns []string
			for _, ev := range w.When {
				patterns = append(patterns, ev.Log+ev.EventReason+ev.EventMessage)
			}
			if w.Left != tt.left || w.Due != tt.due || w.After != hints[tt.hint].After.Duration || !slices.Equal(patterns, tt.patterns) {
				t.Errorf("got %+v (evidence %q), want left %s, due %v, after %s, evidence %q",
					w, patterns, tt.left, tt.due, hints[tt.hint].After.Duration, tt.patterns)
			}
		})
	}
}
