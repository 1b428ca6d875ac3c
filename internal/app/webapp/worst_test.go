package webapp

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/loadgen"
	"oplab.dev/oplab/internal/session"
)

// One learner does their worst (issue 30): while a member of a class of
// 10 fills their cluster, runs four console commands at once over and
// over and floods the console with refused lines (loadgen.Worst), the
// other nine do the failover lab's first exercise:
//
//	go test -run '^$' -bench 'WorstLearner' -benchtime 1x -timeout 60m ./internal/app/webapp/
//
// OPLAB_BENCH_LEARNERS sets the class size, the attacker included (10).

// TestLoadGeneratorWorstLearner keeps the attacker honest where `make
// bench` is not run: one learner of a real class does the failover lab's
// first exercise while another does their worst with tiny bounds. The
// attacker's objects are in their cluster, its counts are the server's
// own (the console's metrics), its refused lines were refused by the
// allow-list, and the other learner was served with nothing lost.
func TestLoadGeneratorWorstLearner(t *testing.T) {
	s := newSite(t)
	o := loadgen.WorstOptions{For: 5 * time.Minute, Replicas: 3, Objects: 6, Batch: 3, Annotation: 1 << 10,
		Commands: 4, Parallel: 4, Command: "kubectl get pods -A -o yaml", Lines: 5, LineBytes: 1 << 10}
	before := consoleCounts(t, s)
	d := runWorstClass(t, s, 1, o, false)
	after := consoleCounts(t, s)
	w := d.worst

	if d.worstErr != nil || w.Failed != 0 {
		t.Fatalf("the attacker: %v; %d requests failed (%v)", d.worstErr, w.Failed, w.Err)
	}
	if !w.Deployment || w.Objects != 2+o.Objects || w.AppliesFailed != 0 {
		t.Errorf("applies: got %+v, want the namespace, the Deployment and %d ConfigMaps created, none failed", w, o.Objects)
	}
	if cms, ds, err := worstObjects(s, d.session); err != nil || cms != o.Objects || ds != 1 {
		t.Errorf("the attacker's cluster: got %d ConfigMaps and %d Deployments (%v), want %d and 1", cms, ds, err, o.Objects)
	}
	if w.Commands != o.Commands || w.CommandsRan() == 0 || w.Output == 0 {
		t.Errorf("commands: got %d answered, %d ran writing %d bytes; want %d answered, some run with output",
			w.Commands, w.CommandsRan(), w.Output, o.Commands)
	}
	if w.Lines != o.Lines || w.LinesRefused != o.Lines || !refusedCp(w) {
		t.Errorf("flood: got %d lines, %d refused (%v); want %d, all refused, cp by the allow-list",
			w.Lines, w.LinesRefused, w.Refusals, o.Lines)
	}
	// The server counted what the attacker counted: every apply and
	// command is a console command, and the other learner ran none.
	ran := w.Applies - w.AppliesRefused + w.CommandsRan()
	refused := w.AppliesRefused + w.CommandsRefused + w.LinesRefused
	if got := after["ok"] + after["failed"] - before["ok"] - before["failed"]; got != ran {
		t.Errorf("commands run: the server counted %d, the attacker %d", got, ran)
	}
	if got := after["refused"] - before["refused"]; got != refused {
		t.Errorf("commands refused: the server counted %d, the attacker %d", got, refused)
	}

	r := d.class
	if r.Served() != 1 || len(r.Outcomes) != 1 {
		t.Errorf("the other learner: got %+v, want served", r.Outcomes)
	}
	for _, lost := range lostOf(t, s, r) {
		t.Error(lost)
	}
}

// BenchmarkWorstLearner is the benchmark: a class of 10 with a
// warm pool for all of it (prepared outside the timer, as
// BenchmarkClassOf30's warm class), one member doing their worst from the
// moment the class starts (loadgen.DefaultWorst: a Deployment of 2,000
// replicas with 16 KiB annotations, 2,000 such ConfigMaps, `kubectl get
// pods -A -o yaml` four at a time, refused 100 KiB lines from four
// senders, each as fast as it is answered) until the other nine, whose
// starts are spread over 10 s as in BenchmarkClassOf30, are done with the
// failover lab's first exercise. Reported: the nine's Check p95 (over every check, and
// the worst of the nine's own), recovery p50 and served; the server's
// RSS and heap growth from before the class to their peak during it (the
// server runs in this process, so both include the load generator's own
// clients: small, they count answers rather than hold them); what the
// attacker did and what was refused; and the machine's CPU and memory.
// Anything of the nine's missing from the board or their timelines fails
// it.
func BenchmarkWorstLearner(b *testing.B) {
	n := envInt(b, "OPLAB_BENCH_LEARNERS", 10)
	if n < 2 {
		b.Fatalf("OPLAB_BENCH_LEARNERS: a class of %d has no one beside the attacker", n)
	}
	// "idle": the same class with the tenth member started and idle, so
	// the nine's figures compare side by side with and without the worst.
	for _, mode := range []string{"idle", "worst"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := newSiteOf(b, app.Config{Admission: app.Admission{MaxClusters: n}},
					ServerConfig{Warm: app.PoolOptions{Sizes: map[string]int{"failover": n}, Every: 200 * time.Millisecond}})
				waitWarm(b, s, n)
				b.StartTimer()
				o := loadgen.WorstOptions{For: 30 * time.Minute}
				if mode == "idle" {
					o = loadgen.WorstOptions{For: -1}
				}
				d := runWorstClass(b, s, n-1, o, true)
				b.StopTimer()
				reportWorst(b, s, d)
				for _, lost := range lostOf(b, s, d.class) {
					b.Error(lost)
				}
				s.close()
				b.StartTimer()
			}
		})
	}
}

// worstDay is a class's day beside the learner doing their worst.
type worstDay struct {
	class    loadgen.Report
	worst    loadgen.WorstReport
	worstErr error
	session  string // the attacker's
	memory   memoryStats
}

// runWorstClass has an instructor create class "load" of the failover lab
// on s, a learner named "worst" join it, start the lab and do their worst
// with o, and at the same time n others join (their starts spread over
// 10 s) and do its first exercise.
// With untilDone the attack ends when the n are done (or at o.For);
// without, at its own bounds, and runWorstClass waits for it. The
// server's memory is sampled from just before the class to its end.
func runWorstClass(t testing.TB, s *site, n int, o loadgen.WorstOptions, untilDone bool) worstDay {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if _, err := s.app.AddInstructor(ctx, "teacher", "correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	c, err := s.app.CreateClass(ctx, class.Actor{Name: "teacher"}, class.Spec{Name: "load", Labs: []string{"failover"}})
	if err != nil {
		t.Fatal(err)
	}
	var (
		d  worstDay
		mu sync.Mutex // d.session, set once the attacker's session exists
	)
	mem := startMemory(200 * time.Millisecond)
	attack, stopAttack := context.WithCancel(ctx)
	defer stopAttack()
	var wg sync.WaitGroup
	wg.Go(func() {
		l := loadgen.NewLearner(s.url)
		if err := l.Join(attack, c.JoinCode, "worst"); err != nil {
			d.worstErr = err
			return
		}
		ss, err := l.Start(attack, "failover")
		if err != nil {
			d.worstErr = fmt.Errorf("start: %w", err)
			return
		}
		mu.Lock()
		d.session = ss.ID
		mu.Unlock()
		if o.For < 0 { // idle: started, and doing nothing more
			<-attack.Done()
			return
		}
		d.worst, d.worstErr = loadgen.Worst(attack, l, ss.ID, o)
	})
	if o.For > 0 && untilDone {
		// The class comes in once the attacker's cluster holds what it
		// made: the nine work beside a cell at its heaviest.
		waitWorstPods(t, s, func() string { mu.Lock(); defer mu.Unlock(); return d.session }, loadgen.DefaultWorst().Replicas)
	}
	d.class, err = loadgen.Run(ctx, loadgen.Options{Base: s.url, Code: c.JoinCode, Lab: "failover", Learners: n,
		Spread: 10 * time.Second, Recovery: 3 * time.Minute, Progress: func(line string) { t.Log(line) }})
	if err != nil {
		t.Fatal(err)
	}
	if untilDone {
		stopAttack()
	}
	wg.Wait()
	d.memory = mem.stop()
	t.Logf("the worst learner: %+v", d.worst)
	return d
}

// reportWorst reports what the issue asks of the class's day beside the
// learner doing their worst.
func reportWorst(b *testing.B, s *site, d worstDay) {
	r, w := d.class, d.worst
	b.ReportMetric(float64(r.Served()), "served")
	b.ReportMetric(float64(len(r.Outcomes)), "learners")
	b.ReportMetric(float64(loadgen.Quantile(r.CheckTimes(), 0.95).Milliseconds()), "check-p95-ms")
	b.ReportMetric(float64(r.WorstLearnerCheckP95().Milliseconds()), "worst-learner-check-p95-ms")
	b.ReportMetric(loadgen.Quantile(r.Recoveries(), 0.5).Seconds(), "recovery-p50-s")
	m := d.memory
	b.ReportMetric(mib(m.rssPeak-m.rssBefore), "rss-growth-MiB")
	b.ReportMetric(mib(m.heapPeak-m.heapBefore), "heap-growth-MiB")
	b.ReportMetric(mib(m.rssBefore), "rss-before-MiB")
	b.ReportMetric(float64(w.Objects), "worst-objects")
	b.ReportMetric(float64(w.Applies), "worst-applies")
	b.ReportMetric(float64(w.AppliesRefused), "worst-applies-refused")
	b.ReportMetric(float64(w.CommandsRan()), "worst-commands-ran")
	b.ReportMetric(float64(w.CommandsRefused), "worst-commands-refused")
	b.ReportMetric(float64(w.Lines), "worst-lines")
	b.ReportMetric(float64(w.LinesRefused), "worst-lines-refused")
	if n, err := worstPods(s, d.session); err == nil {
		b.ReportMetric(float64(n), "worst-pods")
	} else {
		b.Logf("the worst learner's cluster could not be counted: %v", err)
	}
	if st, err := s.app.Status(context.Background(), d.session); err == nil && st.Budget != nil && st.Budget.Trouble != nil {
		b.Logf("the worst learner's cluster: %s (%s)", st.Budget.Trouble.Kind, st.Budget.Trouble.Message)
	}
	if d.worstErr != nil || w.Failed > 0 {
		b.Logf("the worst learner: %v; %d requests failed, the first: %v", d.worstErr, w.Failed, w.Err)
	}
	mc := r.Machine
	b.ReportMetric(100*mc.CPUMean, "cpu-mean-%")
	b.ReportMetric(100*mc.CPUPeak, "cpu-peak-%")
	b.ReportMetric(float64(mc.MemUsedPeak)/(1<<30), "mem-peak-GiB")
	for _, o := range r.Outcomes {
		if o.Err != nil {
			b.Logf("%s not served: %v", o.Name, o.Err)
		}
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// lostOf says what of the class's own results the server does not have:
// each learner's session on the board, and for each served learner the
// exercise passed with their time to recovery, on the board and in their
// timeline (chaos, then recovered).
func lostOf(t testing.TB, s *site, r loadgen.Report) []string {
	t.Helper()
	ctx := context.Background()
	b, err := s.app.Board(ctx, class.Actor{Name: "teacher"}, "load", "en")
	if err != nil {
		return []string{fmt.Sprintf("the board: %v", err)}
	}
	rows := map[string]board.Row{}
	for _, row := range b.Rows {
		rows[row.Session] = row
	}
	var lost []string
	for _, o := range r.Outcomes {
		if o.Session == "" {
			continue // never started: nothing of theirs to keep
		}
		row, ok := rows[o.Session]
		if !ok {
			lost = append(lost, fmt.Sprintf("%s: session %s is not on the board", o.Name, o.Session))
			continue
		}
		if !o.Served {
			continue
		}
		want := o.Recovery.Milliseconds()
		if !passedIn(row, want) {
			lost = append(lost, fmt.Sprintf("%s: the board's row %+v has no exercise passed in %d ms", o.Name, row.Cells, want))
		}
		if err := recoveredIn(ctx, s, o.Session, want); err != nil {
			lost = append(lost, fmt.Sprintf("%s: %v", o.Name, err))
		}
	}
	return lost
}

// passedIn says whether a board row has an exercise passed with a time to
// recovery of ms.
func passedIn(row board.Row, ms int64) bool {
	for _, c := range row.Cells {
		if c.Passed && c.Recovery.Milliseconds() == ms {
			return true
		}
	}
	return false
}

// recoveredIn reads session id's whole timeline, page after page, for the
// chaos and then the recovery in ms.
func recoveredIn(ctx context.Context, s *site, id string, ms int64) error {
	var chaos, recovered bool
	for after := int64(0); ; {
		p, err := s.app.Timeline(ctx, id, after, 0)
		if err != nil {
			return fmt.Errorf("timeline of %s: %w", id, err)
		}
		for _, e := range p.Events {
			switch {
			case e.Kind == session.KindChaos:
				chaos = true
			case e.Kind == session.KindRecovered && chaos && e.Recovery.Duration().Milliseconds() == ms:
				recovered = true
			}
			after = e.Seq
		}
		if !p.More || len(p.Events) == 0 {
			break
		}
	}
	if !recovered {
		return fmt.Errorf("timeline of %s: no chaos then recovery in %d ms (chaos seen: %v)", id, ms, chaos)
	}
	return nil
}

// refusedCp says whether the allow-list refused a flood's cp line (not
// only the console's rate or caps).
func refusedCp(w loadgen.WorstReport) bool {
	for msg := range w.Refusals {
		if strings.Contains(msg, "kubectl cp") {
			return true
		}
	}
	return false
}

var consoleMetric = regexp.MustCompile(`(?m)^oplab_console_commands_total\{outcome="(\w+)"\} (\d+)$`)

// consoleCounts reads the server's count of console commands by outcome.
func consoleCounts(t testing.TB, s *site) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, m := range consoleMetric.FindAllStringSubmatch(s.get(t, "/metrics"), -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	return counts
}

// worstClient is a client of session id's cluster, as its admin.
func worstClient(ctx context.Context, s *site, id string) (kubernetes.Interface, error) {
	path, err := s.app.KubeconfigPath(ctx, id)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// waitWorstPods waits, for up to five minutes, until the attacker's
// cluster holds want pods, and logs how many it held when it stopped.
func waitWorstPods(t testing.TB, s *site, session func() string, want int) {
	t.Helper()
	began := time.Now()
	n := 0
	for time.Since(began) < 5*time.Minute {
		if id := session(); id != "" {
			if got, err := worstPods(s, id); err == nil {
				n = got
				if n >= want {
					break
				}
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("the class comes in with %d pods in the attacker's cluster, after %s", n, time.Since(began).Round(time.Second))
}

// worstPods counts the pods in session id's loadgen.WorstNamespace: a
// list of one, whose remaining count the API server gives (it would not
// with a selector), so that counting costs this process nothing of note.
func worstPods(s *site, id string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := worstClient(ctx, s, id)
	if err != nil {
		return 0, err
	}
	pods, err := cs.CoreV1().Pods(loadgen.WorstNamespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	n := len(pods.Items)
	if r := pods.RemainingItemCount; r != nil {
		n += int(*r)
	}
	return n, nil
}

// worstObjects counts the ConfigMaps (by the names loadgen.Worst gives
// them) and the Deployments in session id's loadgen.WorstNamespace.
func worstObjects(s *site, id string) (configMaps, deployments int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := worstClient(ctx, s, id)
	if err != nil {
		return 0, 0, err
	}
	cms, err := cs.CoreV1().ConfigMaps(loadgen.WorstNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "worst-") {
			configMaps++
		}
	}
	ds, err := cs.AppsV1().Deployments(loadgen.WorstNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	return configMaps, len(ds.Items), nil
}

// memoryStats are this process's memory before a class and at its peak
// during it, in bytes: the resident set (VmRSS, what the machine pays)
// and the heap's live and unswept objects (what Go holds; the rest of
// the RSS is heap not yet returned, stacks and the runtime).
type memoryStats struct {
	rssBefore, rssPeak   uint64
	heapBefore, heapPeak uint64
}

type memorySampler struct {
	done chan struct{}
	out  chan memoryStats
}

// startMemory returns the heap freed to the OS first, so that the growth
// counts from what the server holds, not from garbage of the warm
// pool's filling, then samples every interval until stopped.
func startMemory(every time.Duration) *memorySampler {
	runtime.GC()
	debug.FreeOSMemory()
	m := &memorySampler{done: make(chan struct{}), out: make(chan memoryStats, 1)}
	var st memoryStats
	st.rssBefore, st.heapBefore = rss(), heapObjects()
	st.rssPeak, st.heapPeak = st.rssBefore, st.heapBefore
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				m.out <- st
				return
			case <-t.C:
			}
			st.rssPeak = max(st.rssPeak, rss())
			st.heapPeak = max(st.heapPeak, heapObjects())
		}
	}()
	return m
}

func (m *memorySampler) stop() memoryStats {
	close(m.done)
	return <-m.out
}

// rss is this process's VmRSS, in bytes; 0 when it cannot be read.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heapObjects is the bytes of the heap's objects, live and not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
