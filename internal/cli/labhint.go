package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
)

// printHints prints the hints shown so far, each with what unlocked it,
// and what the next one waits for.
func printHints(w io.Writer, s style, lg locale.Lang, res *session.HintResult) {
	for i, h := range res.Shown {
		label := fmt.Sprintf("Hint %d (%s)", i+1, h.Tier)
		if res.New && i == len(res.Shown)-1 {
			label = s.bold(label + " — new")
		}
		fmt.Fprintf(w, "%s\n%s\n", label, strings.TrimSpace(h.Text.In(lg)))
		if h.Unlock != nil {
			fmt.Fprintln(w, s.dim("Unlocked: "+unlockedBy(h.Unlock)))
		}
		fmt.Fprintln(w)
	}
	switch {
	case !res.More:
		fmt.Fprintln(w, "That was the last hint.")
	case res.Next != nil:
		if !res.New && !res.Next.Due {
			fmt.Fprint(w, "No new hint yet. ")
		}
		fmt.Fprintln(w, nextHint(res.Next))
	case !res.New:
		fmt.Fprintln(w, "No new hint yet: the next comes when there is evidence for it, or after a while. Look at the log (oplab logs) and the events.")
	}
}

// unlockedBy says what made a hint due.
func unlockedBy(u *session.HintUnlock) string {
	switch u.Kind {
	case session.UnlockTime:
		from := "the exercise started"
		if u.Since == session.SinceFault {
			from = "the fault"
		}
		return fmt.Sprintf("%s since %s", u.After.Duration(), from)
	case session.UnlockLog:
		return "the operator logged: " + u.Seen
	case session.UnlockEvent:
		return fmt.Sprintf("a %s event was recorded: %s", u.Reason, u.Seen)
	case session.UnlockMessage:
		return "an event said: " + u.Seen
	}
	return u.Kind
}

// nextHint says what the next hint waits for: its time, its evidence, or
// only to be asked for.
func nextHint(n *session.HintWait) string {
	var evs []string
	for _, ev := range n.Evidence {
		evs = append(evs, evidence(ev))
	}
	what := strings.Join(evs, " or ")
	left := roundUp(n.Left.Duration())
	switch {
	case n.Due:
		return "The next hint is ready: run `oplab lab hint` again."
	case left > 0 && what != "":
		return fmt.Sprintf("Next hint in %s, or sooner when %s is seen (oplab logs, kubectl get events).", left, what)
	case left > 0:
		return fmt.Sprintf("Next hint in %s.", left)
	default:
		return fmt.Sprintf("The next hint comes when %s is seen (oplab logs, kubectl get events).", what)
	}
}

func evidence(ev session.HintEvidence) string {
	switch ev.Kind {
	case session.UnlockEvent:
		return fmt.Sprintf("a %s event", ev.Reason)
	case session.UnlockLog:
		return fmt.Sprintf("a log line matching /%s/", ev.Pattern)
	default:
		return fmt.Sprintf("an event message matching /%s/", ev.Pattern)
	}
}

// roundUp rounds d up to the second: "in 0s" would promise a hint that is
// not due yet.
func roundUp(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Second - 1).Truncate(time.Second)
}
