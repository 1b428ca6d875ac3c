package cli

import (
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
)

func TestPrintHints(t *testing.T) {
	t.Parallel()
	nudge := session.ShownHint{Tier: "nudge", Text: locale.Text{En: "Read the event.", Ko: "이벤트를 읽으세요."},
		Unlock: &session.HintUnlock{Kind: session.UnlockEvent, Reason: "FailingOver", Seen: "electing prod-db-1"}}
	where := func(u session.HintUnlock) session.ShownHint {
		return session.ShownHint{Tier: "where", Text: locale.Text{En: "Compare the primaries."}, Unlock: &u}
	}
	ms := func(d time.Duration) jsonconv.Duration { return jsonconv.Duration(d) }
	tests := []struct {
		name string
		res  session.HintResult
		want []string
	}{
		{"event unlock, next by time or evidence",
			session.HintResult{New: true, More: true, Shown: []session.ShownHint{nudge},
				Next: &session.HintWait{Left: ms(39200 * time.Millisecond), Evidence: []session.HintEvidence{
					{Kind: session.UnlockEvent, Reason: "FailoverComplete"}, {Kind: session.UnlockLog, Pattern: "(?i)promot"}}}},
			[]string{"Hint 1 (nudge) — new", "Unlocked: a FailingOver event was recorded: electing prod-db-1",
				"Next hint in 40s, or sooner when a FailoverComplete event or a log line matching /(?i)promot/ is seen"}},
		{"time unlock, nothing due, next by time",
			session.HintResult{More: true, Shown: []session.ShownHint{nudge, where(session.HintUnlock{Kind: session.UnlockTime, After: ms(time.Minute), Since: session.SinceFault})},
				Next: &session.HintWait{Left: ms(time.Minute)}},
			[]string{"Hint 2 (where)\nCompare the primaries.\nUnlocked: 1m0s since the fault", "No new hint yet. Next hint in 1m0s."}},
		{"time since the start",
			session.HintResult{New: true, Shown: []session.ShownHint{where(session.HintUnlock{Kind: session.UnlockTime, After: ms(2 * time.Minute), Since: session.SinceStart})}},
			[]string{"Unlocked: 2m0s since the exercise started", "That was the last hint."}},
		{"log unlock, next by evidence only",
			session.HintResult{New: true, More: true, Shown: []session.ShownHint{where(session.HintUnlock{Kind: session.UnlockLog, Pattern: "(?i)forbidden", Seen: `statefulsets "prod-db" is forbidden`})},
				Next: &session.HintWait{Evidence: []session.HintEvidence{{Kind: session.UnlockMessage, Pattern: "exceeded quota"}}}},
			[]string{`Unlocked: the operator logged: statefulsets "prod-db" is forbidden`,
				"The next hint comes when an event message matching /exceeded quota/ is seen"}},
		{"message unlock, next due already",
			session.HintResult{New: true, More: true, Shown: []session.ShownHint{where(session.HintUnlock{Kind: session.UnlockMessage, Pattern: "exceeded quota", Seen: "exceeded quota: pg-quota"})},
				Next: &session.HintWait{Due: true}},
			[]string{"Unlocked: an event said: exceeded quota: pg-quota", "The next hint is ready: run `oplab lab hint` again."}},
		{"nothing shown yet",
			session.HintResult{More: true, Next: &session.HintWait{Evidence: []session.HintEvidence{{Kind: session.UnlockEvent, Reason: "FailingOver"}}}},
			[]string{"No new hint yet. The next hint comes when a FailingOver event is seen"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			printHints(&b, style{}, locale.Lang("en"), &tt.res)
			for _, want := range tt.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("got\n%s\nwant it to contain %q", b.String(), want)
				}
			}
		})
	}
}
