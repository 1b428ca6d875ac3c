package lab

import (
	"testing"
	"time"
)

func TestNextHint(t *testing.T) {
	t.Parallel()
	l, errs := Parse("demo.yaml", readDemo(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ex := &l.Exercises[0] // hints: nudge after 1m; command when log matches (?i)promot
	promoted := []string{"did: promoted prod-db-1"}
	tests := []struct {
		name   string
		shown  int
		o      Observed
		want   int
		wantOK bool
	}{
		{"nothing yet", 0, Observed{Elapsed: 30 * time.Second}, 0, false},
		{"time for the nudge", 0, Observed{Elapsed: time.Minute}, 0, true},
		{"evidence does not skip the nudge", 0, Observed{Elapsed: time.Second, Log: promoted}, 0, false},
		{"evidence shows the next tier", 1, Observed{Elapsed: time.Second, Log: []string{"x", "PROMOTING prod-db-1"}}, 1, true},
		{"unrelated log", 1, Observed{Elapsed: time.Hour, Log: []string{"in sync"}}, 0, false},
		{"all shown", 2, Observed{Elapsed: time.Hour, Log: promoted}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ex.NextHint(tt.shown, tt.o)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestHintEvents(t *testing.T) {
	t.Parallel()
	src := edit(t, readDemo(t), `when: [{log: "(?i)promot"}]`, `when: [{eventReason: FailedCreate}, {eventMessage: "exceeded quota"}]`)
	l, errs := Parse("demo.yaml", src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	h := &l.Exercises[0].Hints[1]
	for _, tt := range []struct {
		ev   Event
		want bool
	}{
		{Event{Reason: "FailedCreate"}, true},
		{Event{Reason: "Created", Message: "pods is forbidden: exceeded quota: pg-quota"}, true},
		{Event{Reason: "Created", Message: "created pod"}, false},
	} {
		if got := h.Due(Observed{Events: []Event{tt.ev}}); got != tt.want {
			t.Errorf("%+v: got due %v, want %v", tt.ev, got, tt.want)
		}
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	l, _ := Parse("demo.yaml", readDemo(t))
	ex := &l.Exercises[0] // goals: primaryChanged weight 2, replicasReady weight 1
	for _, tt := range []struct {
		passed    []bool
		got, want int
	}{
		{nil, 0, 3}, {[]bool{true, false}, 2, 3}, {[]bool{false, true}, 1, 3}, {[]bool{true, true}, 3, 3},
	} {
		got, total := ex.Score(tt.passed)
		if got != tt.got || total != tt.want {
			t.Errorf("%v: got %d/%d, want %d/%d", tt.passed, got, total, tt.got, tt.want)
		}
	}
}
