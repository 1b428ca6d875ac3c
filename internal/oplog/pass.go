package oplog

import (
	"slices"
	"strings"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

// Pass is one reconcile pass of the reference operator as the course draws
// the loop: Watch (what it read), Diff (what differed from the spec), Act
// (what it did), then the status it wrote; how long it took and when it
// runs next. The operator logs a pass as one line whose fields read,
// differs, did, primary, took and next hold these (see
// internal/operator/controller/log.go); ParseText turns them into a Pass,
// so the page and the terminal show the same thing.
type Pass struct {
	Watch []string `json:"watch,omitempty"` // what the pass read: pods and their servers, trouble seen
	Diff  []string `json:"diff,omitempty"`  // what differed from the spec
	Act   []string `json:"act,omitempty"`   // what it did, in order; the status write is Status
	// Kinds names what Act did, one word each, sorted and unique
	// (promoted, fenced, labelled, created…), to filter passes by.
	Kinds []string `json:"kinds,omitempty"`
	// Status is what the pass wrote into the status ("phase Running"),
	// empty when it wrote nothing.
	Status string `json:"status,omitempty"`
	// Primary is status.currentPrimary after the pass.
	Primary string            `json:"primary,omitempty"`
	Took    jsonconv.Duration `json:"tookMs"`
	// Next is when the pass asked to run again; zero when the next pass
	// waits for a change (or the periodic resync).
	Next jsonconv.Duration `json:"nextMs,omitempty"`
	// Idle is a pass that found nothing to change and changed nothing.
	Idle bool `json:"idle"`
}

// The keys of the operator's line that make up a Pass.
const (
	keyRead    = "read"
	keyDiffers = "differs"
	keyDid     = "did"
	keyPrimary = "primary"
	keyTook    = "took"
	keyNext    = "next"
)

// wroteStatus is how the operator says it wrote the status (status.go).
const wroteStatus = "wrote status ("

// passOf makes the Pass of e when e is the line of a reconcile pass (it has
// took and what it read, differed or did) and takes those fields out of
// e.Fields, so that each fact is in the Entry once.
func passOf(e *Entry) *Pass {
	f := e.Fields
	took, ok := f[keyTook]
	if !ok {
		return nil
	}
	if _, read := f[keyRead]; !read {
		if _, did := f[keyDid]; !did {
			if _, diff := f[keyDiffers]; !diff {
				return nil
			}
		}
	}
	p := &Pass{Watch: items(f[keyRead]), Diff: items(f[keyDiffers]), Primary: f[keyPrimary]}
	tookD, _ := time.ParseDuration(took)
	next, _ := time.ParseDuration(f[keyNext])
	p.Took, p.Next = jsonconv.Duration(tookD), jsonconv.Duration(next)
	for _, a := range items(f[keyDid]) {
		if s, ok := strings.CutPrefix(a, wroteStatus); ok {
			p.Status = strings.TrimSuffix(s, ")")
			continue
		}
		p.Act = append(p.Act, a)
		p.Kinds = append(p.Kinds, actKinds(a)...)
	}
	slices.Sort(p.Kinds)
	p.Kinds = slices.Compact(p.Kinds)
	p.Idle = len(p.Diff) == 0 && len(p.Act) == 0 && p.Status == "" && e.Error == ""
	for _, k := range []string{keyRead, keyDiffers, keyDid, keyPrimary, keyTook, keyNext} {
		delete(f, k)
	}
	if len(f) == 0 {
		e.Fields = nil
	}
	return p
}

// items splits a field the operator joined with "; " into its parts. A part
// that goes on from the one before ("…; will read again", "…; waiting", an
// API error's "…; please apply your changes…") stays with it.
func items(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(s, "; ") {
		if len(out) > 0 && continues(part) {
			out[len(out)-1] += "; " + part
			continue
		}
		out = append(out, part)
	}
	return out
}

func continues(part string) bool {
	return part == "waiting" || strings.HasPrefix(part, "will ") || strings.HasPrefix(part, "please ")
}

// actKinds names what one act of the operator did, from the words its
// writers use (controller/*.go: p.done). Relabelling a pod to unhealthy
// is how the operator fences it: the -rw Service loses it.
func actKinds(a string) []string {
	first, rest, _ := strings.Cut(a, " ")
	switch {
	case first == "labelled" && strings.HasSuffix(rest, "→ unhealthy"):
		return []string{"fenced", "labelled"}
	case first == "stopped:", first == "status" && strings.HasPrefix(rest, "write conflicted"):
		return []string{"conflict"}
	case first == "no" && strings.Contains(rest, "waiting"):
		return []string{"waiting"}
	case strings.HasPrefix(rest, "now follows "):
		return []string{"follows"}
	case strings.HasPrefix(rest, "is gone"):
		return []string{"gone"}
	}
	return []string{strings.TrimRight(first, ":")}
}
