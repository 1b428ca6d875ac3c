package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The learner's worst: one member of a class who, with nothing but the
// lab page's console and YAML editor, makes the shared server and machine
// pay as much as they can — thousands of objects in their cluster, four
// console commands at once over and over, and a flood of lines the
// console refuses. The rest of the class should not notice.

// WorstOptions bound what the worst learner does. Each stream ends at its
// count or after For, whichever comes first; zero fields take the
// defaults (DefaultWorst).
type WorstOptions struct {
	// For bounds the whole attack.
	For time.Duration
	// Replicas is the Deployment applied (in WorstNamespace, with the
	// namespace) before the rest begins, its pods carrying Annotation
	// bytes each: one apply, and the cluster's controllers make thousands
	// of objects.
	Replicas int
	// Objects ConfigMaps are made through the editor, Batch to an apply,
	// each with an annotation of Annotation bytes.
	Objects, Batch, Annotation int
	// Command is run Commands times in all, by Parallel senders at once.
	Command            string
	Commands, Parallel int
	// Lines refused lines of LineBytes each ("kubectl cp " and filler:
	// cp is never allowed) are sent in all by Floods senders, each
	// sending its next as soon as its last is answered.
	Lines, LineBytes, Floods int
	// Retry is how long an apply or a command the console refused waits
	// before it is sent again (the console takes a few lines a second).
	Retry time.Duration
}

// DefaultWorst is the worst the issue describes: a Deployment of 2,000
// replicas and 2,000 ConfigMaps with 16 KiB of annotations each, `kubectl
// get pods -A -o yaml` four at a time (the console's cap of a learner's
// commands at once, so that the ConfigMaps' applies find room only
// between them), and 100 KiB refused lines from four senders.
func DefaultWorst() WorstOptions {
	return WorstOptions{
		For:      time.Minute,
		Replicas: 2000, Objects: 2000, Batch: 50, Annotation: 16 << 10,
		Command: "kubectl get pods -A -o yaml", Commands: 1000, Parallel: 4,
		Lines: 100000, LineBytes: 100 << 10, Floods: 4,
		Retry: 200 * time.Millisecond,
	}
}

// maxApply is the most YAML one apply carries: the server takes request
// bodies of up to 1 MiB, the console stdin of as much.
const maxApply = 900 << 10

func (o *WorstOptions) setDefaults() error {
	d := DefaultWorst()
	or := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	or(&o.Replicas, d.Replicas)
	or(&o.Objects, d.Objects)
	or(&o.Batch, d.Batch)
	or(&o.Annotation, d.Annotation)
	or(&o.Commands, d.Commands)
	or(&o.Parallel, d.Parallel)
	or(&o.Lines, d.Lines)
	or(&o.LineBytes, d.LineBytes)
	or(&o.Floods, d.Floods)
	if o.For <= 0 {
		o.For = d.For
	}
	if o.Retry <= 0 {
		o.Retry = d.Retry
	}
	if o.Command == "" {
		o.Command = d.Command
	}
	if o.Annotation > 200<<10 {
		return fmt.Errorf("loadgen: an annotation of %d bytes is over the API server's 256 KiB for all of an object's: use at most 200 KiB", o.Annotation)
	}
	if o.Batch*(o.Annotation+256) > maxApply {
		return fmt.Errorf("loadgen: %d ConfigMaps of %d bytes are more than one apply carries (%d KiB): use a smaller Batch", o.Batch, o.Annotation, maxApply>>10)
	}
	return nil
}

// WorstReport counts what the worst learner did and what the server
// refused. A request counts once answered; one cut short by the end of
// the attack's context does not count.
type WorstReport struct {
	// Deployment: the Deployment of Replicas was applied.
	Deployment bool
	// Applies were answered, AppliesRefused of them refused by the
	// console and AppliesFailed failed in kubectl (the cluster's own
	// refusal: quota, etcd's space, a cell over its budget); Objects is
	// how many objects kubectl said it created, the namespace and the
	// Deployment included (not the Deployment's pods).
	Applies, AppliesRefused, AppliesFailed, Objects int
	// Commands were answered, CommandsRefused of them refused and
	// CommandsStopped ended by an error after they ran (kubectl's
	// status, the console's output or memory limit); Output is the bytes
	// they wrote.
	Commands, CommandsRefused, CommandsStopped int
	Output                                     int64
	// Lines of the flood were answered, LinesRefused of them refused.
	Lines, LinesRefused int
	// Refusals count the console's refusals by what they said (the
	// first maxRefusals kinds; the rest under "other").
	Refusals map[string]int
	// Failed requests got no answer, or not a 200 (Err is the first).
	Failed int
	Err    error
	Took   time.Duration
}

// maxRefusals bounds the kinds of refusal a report keeps apart.
const maxRefusals = 16

// refused counts one refusal of the console by its message.
func (r *WorstReport) refused(msg string) {
	if r.Refusals == nil {
		r.Refusals = map[string]int{}
	}
	if _, ok := r.Refusals[msg]; !ok && len(r.Refusals) >= maxRefusals {
		msg = "other"
	}
	r.Refusals[msg]++
}

// CommandsRan counts the commands that started (refused ones did not).
func (r WorstReport) CommandsRan() int { return r.Commands - r.CommandsRefused }

// Worst has l, joined and holding session id, do their worst to the
// session's cluster and the server for o's bounds: the Deployment first,
// then the objects, the commands and the flood at the same time. It
// returns when every stream has ended; an error only for options it
// cannot use (what failed on the way is counted in the report).
func Worst(ctx context.Context, l *Learner, id string, o WorstOptions) (WorstReport, error) {
	if err := o.setDefaults(); err != nil {
		return WorstReport{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.For)
	defer cancel()
	w := &worst{l: l, id: id, o: o}
	w.connections()
	began := time.Now()
	w.deployment(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.objects(ctx) })
	wg.Go(func() { w.commands(ctx) })
	wg.Go(func() { w.flood(ctx) })
	wg.Wait()
	w.r.Took = time.Since(began)
	return w.r, nil
}

// worst is one attack under way; mu guards r.
type worst struct {
	l  *Learner
	id string
	o  WorstOptions

	mu sync.Mutex
	r  WorstReport
}

// connections gives the learner room to keep a connection per stream, as
// a browser keeps six to a server: with the default two, every request
// beyond them dials anew, and a flood runs loopback out of ports.
func (w *worst) connections() {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = w.o.Parallel + w.o.Floods + 2
	w.l.http.Transport = t
}

// count records one answered request; a request the attack's end cut
// short counts for nothing.
func (w *worst) count(ctx context.Context, err error, tally func(r *WorstReport)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		w.r.Failed++
		if w.r.Err == nil {
			w.r.Err = err
		}
	default:
		tally(&w.r)
	}
}

// deployment applies the Deployment of o.Replicas, again after each
// refusal, until it is applied or the attack ends.
func (w *worst) deployment(ctx context.Context) {
	yaml := deploymentYAML(w.o.Replicas, w.o.Annotation)
	for ctx.Err() == nil {
		if w.apply(ctx, yaml) {
			w.mu.Lock()
			w.r.Deployment = true
			w.mu.Unlock()
			return
		}
		pause(ctx, w.o.Retry)
	}
}

// objects applies the ConfigMaps batch after batch; a batch not applied
// is sent again after o.Retry.
func (w *worst) objects(ctx context.Context) {
	for first := 0; first < w.o.Objects && ctx.Err() == nil; {
		n := min(w.o.Batch, w.o.Objects-first)
		if w.apply(ctx, configMapsYAML(first, n, w.o.Annotation)) {
			first += n
			continue
		}
		pause(ctx, w.o.Retry)
	}
}

// apply applies yaml once and counts what came of it; it reports whether
// kubectl applied all of it.
func (w *worst) apply(ctx context.Context, yaml string) bool {
	a, err := w.l.Apply(ctx, w.id, yaml)
	w.count(ctx, err, func(r *WorstReport) {
		r.Applies++
		r.Objects += created(a.Output)
		switch {
		case a.Refused():
			r.AppliesRefused++
			r.refused(a.Error)
		case !a.OK:
			r.AppliesFailed++
		}
	})
	return err == nil && a.OK
}

// commands runs o.Command o.Commands times, o.Parallel at once; one the
// console refused is sent again after o.Retry.
func (w *worst) commands(ctx context.Context) {
	body, _ := json.Marshal(map[string]string{"line": w.o.Command}) // strings always encode
	w.many(ctx, w.o.Parallel, w.o.Commands, func() {
		a, err := w.l.console(ctx, w.id, body)
		w.count(ctx, err, func(r *WorstReport) {
			r.Commands++
			r.Output += a.Output
			switch {
			case a.Refused():
				r.CommandsRefused++
				r.refused(a.Error)
			case a.Error != "":
				r.CommandsStopped++
			}
		})
		if err != nil || a.Refused() {
			pause(ctx, w.o.Retry)
		}
	})
}

// flood sends o.Lines refused lines, o.Floods at once, each sender's
// next as soon as its last is answered.
func (w *worst) flood(ctx context.Context) {
	line := "kubectl cp " + strings.Repeat("x", w.o.LineBytes)
	body, _ := json.Marshal(map[string]string{"line": line})
	w.many(ctx, w.o.Floods, w.o.Lines, func() {
		a, err := w.l.console(ctx, w.id, body)
		w.count(ctx, err, func(r *WorstReport) {
			r.Lines++
			if a.Refused() {
				r.LinesRefused++
				r.refused(a.Error)
			}
		})
	})
}

// many has senders call send, n times in all, until ctx ends.
func (w *worst) many(ctx context.Context, senders, n int, send func()) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for ctx.Err() == nil && left.Add(-1) >= 0 {
				send()
			}
		})
	}
	wg.Wait()
}

// pause waits d, or less when ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// created counts the objects kubectl apply's output says it created
// ("configmap/worst-00001 created").
func created(output string) int {
	n := 0
	for line := range strings.Lines(output) {
		if strings.HasSuffix(strings.TrimSpace(line), " created") {
			n++
		}
	}
	return n
}

// WorstNamespace is where Worst makes everything: a namespace of its own
// (made by the Deployment's apply), so that it is counted apart from the
// lab's objects, and the commands' "get -A" reads it all the same.
const WorstNamespace = "worst"

// deploymentYAML is the namespace and its Deployment of replicas pods
// with an annotation of size bytes each.
func deploymentYAML(replicas, size int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worst
  namespace: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: worst}
  template:
    metadata:
      labels: {app: worst}
      annotations: {filler: %[3]s}
    spec:
      containers:
      - name: worst
        image: worst
`, WorstNamespace, replicas, strings.Repeat("x", size))
}

// configMapsYAML is n ConfigMaps from number first on, each with an
// annotation of size bytes.
func configMapsYAML(first, n, size int) string {
	filler := strings.Repeat("x", size)
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: worst-%05d
  namespace: %s
  annotations: {filler: %s}
data: {n: "%d"}
`, i, WorstNamespace, filler, i)
	}
	return b.String()
}
