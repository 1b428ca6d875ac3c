package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/room"
	"oplab.dev/oplab/internal/session"
)

// BenchmarkSixtySessions: sixty failover sessions on the machine at once,
// thirty of them asleep, as a day of two classes leaves it: the first
// thirty learners start, each leaves a ConfigMap of their own in their
// cluster, and walks away, and their sessions sleep stopped (as
// housekeeping deepens a long sleep, their memory given back). Thirty more
// start beside them, and go quiet for oplab serve's --make-room-after
// (two minutes). Then the thirty come back, one every two seconds, and
// each wakes their session (App.Wake, what their page or command does
// first). Thirty awake is all the budget holds on this machine, so each
// wake waits in the admission queue, and takes the room of the quiet
// session unseen for longest, which sleeps stopped in its turn.
//
// The sleepers are stopped, not frozen, because the budget says so: a
// frozen cell keeps its memory and may grow to its ceiling once thawed,
// so admission counts it at its ceiling as a live one (768 MiB; thirty of
// them and their margin is the 23.5 GiB of this machine), and thirty
// frozen beside thirty awake would be promised twice over.
// OPLAB_BENCH_FROZEN freezes that many of the sleepers instead, for a
// smaller run (OPLAB_BENCH_SESSIONS, 60 by default, half of them asleep);
// BenchmarkWake measures a wake from memory alone.
//
// It reports how many of the starts were served (started-of-sessions: a
// start waits for room, and a wave not started within twenty minutes is
// refused), the starts' p50 and p95, each wake's time (ms-stopped, and
// ms-frozen with OPLAB_BENCH_FROZEN: targets 5 s and 2 s), what the awake
// and the asleep sessions cost measured as admission measures a cluster
// (mean PSS and CPU of the awake, the most CPU of any asleep: the target
// is 0), and what the machine had left: its least MemAvailable, and the
// pages it swapped out and the processes the kernel's OOM killer killed
// over the run (both must stay 0). A woken session whose learner's
// ConfigMap is gone or not the same object fails the benchmark, as does a
// cell whose memory ceiling killed a process. made-room is how many of
// the second thirty were stopped to make room for a wake.
//
//	go test -run '^$' -bench '^BenchmarkSixtySessions$' -benchtime 1x -count 1 -timeout 90m ./internal/app/
func BenchmarkSixtySessions(b *testing.B) {
	n, frozen := benchCount(b, "OPLAB_BENCH_SESSIONS", 60), benchCount(b, "OPLAB_BENCH_FROZEN", 0)
	asleep := n / 2
	if n < 2 || frozen > asleep {
		b.Fatalf("%d sessions, %d of the %d asleep frozen: want 2 or more, and at most the asleep frozen", n, frozen, asleep)
	}

	ctx := context.Background()
	// As oplab serve: a learner back makes room of a session nobody has
	// looked at for two minutes.
	a, dir := openSleeping(b, Admission{MakeRoomAfter: DefaultMakeRoomAfter})
	machine := watchMachine(b)
	defer machine.stop()

	for b.Loop() {
		sixty(ctx, b, a, dir, n, asleep, frozen)
	}
	least, swapped, killed := machine.stop()
	b.ReportMetric(float64(least)/room.MiB, "MiB-available-min")
	b.ReportMetric(float64(swapped), "pages-swapped-out")
	b.ReportMetric(float64(killed), "oom-kills")
	if swapped > 0 || killed > 0 {
		b.Errorf("the machine swapped out %d pages and its OOM killer killed %d processes", swapped, killed)
	}
}

// sixty is one run of BenchmarkSixtySessions: n sessions, the first
// asleep of which sleep, the first frozen of those frozen.
func sixty(ctx context.Context, b *testing.B, a *App, dir string, n, asleep, frozen int) {
	sessions := make([]*session.Status, n)
	var starts []time.Duration
	var refused []error
	defer func() {
		for _, st := range sessions {
			if st != nil {
				_, _ = a.sessions.Stop(ctx, st.ID, "the benchmark ended", nil)
			}
		}
	}()
	// start starts sessions[from:to], two at a time, within twenty
	// minutes.
	start := func(from, to int) {
		var (
			mu    sync.Mutex
			wg    sync.WaitGroup
			slots = make(chan struct{}, 2)
		)
		ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
		defer cancel()
		for i := from; i < to; i++ {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				began := time.Now()
				st, err := a.Start(ctx, session.StartOptions{Learner: fmt.Sprintf("learner%02d", i), Lab: "failover"}, nil)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					refused = append(refused, fmt.Errorf("learner %d: %w", i, err))
					return
				}
				sessions[i] = st
				starts = append(starts, time.Since(began))
			})
		}
		wg.Wait()
	}

	// The first ones start, leave something of theirs and walk away.
	start(0, asleep)
	left := make([]*corev1.ConfigMap, asleep)
	for i, st := range sessions[:asleep] {
		if st == nil {
			continue
		}
		var err error
		if left[i], err = leaveSomething(ctx, a, st); err != nil {
			b.Fatalf("learner %d: %v", i, err)
		}
	}
	in := func(ids []*session.Status) func(string) bool {
		return func(id string) bool {
			for _, st := range ids {
				if st != nil && st.ID == id {
					return true
				}
			}
			return false
		}
	}
	// Those past frozen are away for longer: stopped at once.
	if _, err := a.sessions.Sleep(ctx, session.SleepOptions{Freeze: time.Nanosecond, Stop: time.Nanosecond, Watched: in(sessions[:frozen])}); err != nil {
		b.Fatal(err)
	}
	if _, err := a.sessions.Sleep(ctx, session.SleepOptions{Freeze: time.Nanosecond}); err != nil {
		b.Fatal(err)
	}
	for i, st := range sessions[:asleep] {
		if st == nil {
			continue
		}
		s, err := a.Status(ctx, st.ID)
		if err != nil || s.Asleep == nil || s.Asleep.Stopped != (i >= frozen) {
			b.Fatalf("learner %d away: asleep %+v (%v); want asleep, stopped %v", i, s.Asleep, err, i >= frozen)
		}
	}

	// The others start beside them and stay.
	start(asleep, n)
	b.ReportMetric(float64(n-len(refused))/float64(n), "started-of-sessions")
	if len(refused) > 0 {
		b.Errorf("%d of %d starts refused, or not started within their wave's twenty minutes:\n%v", len(refused), n, errors.Join(refused...))
	}
	seconds(b, starts, "s-start")
	b.ReportMetric(percentile(starts, 0.95).Seconds(), "s-start-p95")

	quiet := time.Now()

	// What each costs, once the last start has settled.
	time.Sleep(30 * time.Second)
	awake, sleeping := costs(ctx, b, dir, sessions, asleep)
	b.ReportMetric(awake.CPU*1000, "millicores/awake")
	b.ReportMetric(float64(awake.Memory)/room.MiB, "MiB/awake")
	b.ReportMetric(sleeping.CPU*1000, "millicores/asleep-max")
	// The second thirty have gone quiet for long enough to give their room.
	time.Sleep(time.Until(quiet.Add(DefaultMakeRoomAfter)))

	// The first learners come back, one every two seconds.
	var (
		mu                sync.Mutex
		wg                sync.WaitGroup
		fromMem, fromDisk []time.Duration
		lost              []error
	)
	for i, st := range sessions[:asleep] {
		if st == nil {
			continue
		}
		wg.Go(func() {
			began := time.Now()
			s, err := a.Wake(ctx, st.ID, nil)
			took := time.Since(began)
			if err == nil && s.Asleep != nil {
				err = fmt.Errorf("still asleep: %+v", s.Asleep)
			}
			if err == nil {
				err = foundAsLeft(ctx, a, st, left[i])
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				lost = append(lost, fmt.Errorf("learner %d: %w", i, err))
			case i < frozen:
				fromMem = append(fromMem, took)
			default:
				fromDisk = append(fromDisk, took)
			}
		})
		time.Sleep(2 * time.Second)
	}
	wg.Wait()
	if len(lost) > 0 {
		b.Fatalf("%d of %d learners back did not find their session as they left it:\n%v", len(lost), asleep, errors.Join(lost...))
	}
	reportQuantiles(b, fromMem, "ms-frozen")
	reportQuantiles(b, fromDisk, "ms-stopped")
	b.ReportMetric(percentile(fromDisk, 0.95).Seconds()*1000, "ms-stopped-p95")
	made := 0
	for _, st := range sessions[asleep:] {
		if st == nil {
			continue
		}
		if s, err := a.Status(ctx, st.ID); err == nil && s.Asleep != nil && s.Asleep.Stopped {
			made++
		}
	}
	b.ReportMetric(float64(made), "made-room")

	for i, st := range sessions {
		if st == nil {
			continue
		}
		// A cluster stopped for room has no cell to read: its kills, if
		// any, are in the machine's count.
		if s, err := a.Status(ctx, st.ID); err != nil || s.Asleep != nil && s.Asleep.Stopped {
			continue
		}
		u, err := a.clusters.Usage(ctx, st.Cluster)
		if err != nil {
			b.Fatal(err)
		}
		if u.OOMKills > 0 {
			b.Errorf("learner %d's cell's memory ceiling (%d MiB) killed %d processes", i, u.MemoryLimit>>20, u.OOMKills)
		}
	}
}

// benchCount reads a count from the environment variable name, or def.
func benchCount(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// leaveSomething makes, as a learner would before they walk away, a
// ConfigMap of theirs in st's cluster.
func leaveSomething(ctx context.Context, a *App, st *session.Status) (*corev1.ConfigMap, error) {
	cs, err := adminOf(a, st)
	if err != nil {
		return nil, err
	}
	return cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "left-as-is"},
		Data:       map[string]string{"learner": st.Learner, "at": time.Now().Format(time.RFC3339Nano)},
	}, metav1.CreateOptions{})
}

// foundAsLeft says whether st's cluster holds the very ConfigMap its
// learner left.
func foundAsLeft(ctx context.Context, a *App, st *session.Status, left *corev1.ConfigMap) error {
	cs, err := adminOf(a, st)
	if err != nil {
		return err
	}
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, left.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the ConfigMap left: %w", err)
	}
	if got.UID != left.UID || got.ResourceVersion != left.ResourceVersion || got.Data["at"] != left.Data["at"] {
		return fmt.Errorf("the ConfigMap left is not as left: uid %s, resourceVersion %s, data %v; left %s, %s, %v",
			got.UID, got.ResourceVersion, got.Data, left.UID, left.ResourceVersion, left.Data)
	}
	return nil
}

func adminOf(a *App, st *session.Status) (*kubernetes.Clientset, error) {
	cfg, err := a.clusters.RESTConfig(st.Cluster)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// costs measures the sessions' clusters as admission does, over ten
// seconds: the mean of the awake ones (sessions[asleep:]) and the most
// CPU of the asleep ones.
func costs(ctx context.Context, b *testing.B, dir string, sessions []*session.Status, asleep int) (awake, sleeping room.Cost) {
	b.Helper()
	m, err := room.NewMeter(room.MeterOptions{ClusterDir: filepath.Join(dir, "clusters")})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Clusters(ctx); err != nil {
		b.Fatal(err)
	}
	time.Sleep(10 * time.Second)
	byDir, err := m.Clusters(ctx)
	if err != nil {
		b.Fatal(err)
	}
	per := map[string]room.Cost{} // by cluster name
	for d, c := range byDir {
		per[filepath.Base(d)] = c
	}
	for i, st := range sessions {
		if st == nil {
			continue
		}
		c, ok := per[st.Cluster]
		switch {
		case i < asleep && ok:
			sleeping.CPU = max(sleeping.CPU, c.CPU)
			sleeping.Clusters++
		case i >= asleep && ok:
			awake.CPU += c.CPU
			awake.Memory += c.Memory
			awake.Clusters++
		case i >= asleep:
			b.Errorf("learner %d's cluster %s: not measured, want it live", i, st.Cluster)
		}
	}
	if awake.Clusters > 0 {
		awake.CPU /= float64(awake.Clusters)
		awake.Memory /= uint64(awake.Clusters)
	}
	return awake, sleeping
}

// percentile is the p-quantile of all, which it sorts.
func percentile(all []time.Duration, p float64) time.Duration {
	if len(all) == 0 {
		return 0
	}
	slices.Sort(all)
	return all[max(int(p*float64(len(all))+0.999999)-1, 0)]
}

// machineWatch follows the machine over a benchmark: its least
// MemAvailable, and its swap-outs and OOM kills since it began.
type machineWatch struct {
	done              chan struct{}
	once              sync.Once
	mu                sync.Mutex
	least             uint64
	swapped0, killed0 uint64
	swapped, killed   uint64
}

func watchMachine(b *testing.B) *machineWatch {
	b.Helper()
	w := &machineWatch{done: make(chan struct{}), least: ^uint64(0)}
	var err error
	if w.swapped0, w.killed0, err = vmstat(); err != nil {
		b.Fatal(err)
	}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			w.sample()
			select {
			case <-w.done:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *machineWatch) sample() {
	avail, err := memAvailable()
	if err != nil {
		return
	}
	w.mu.Lock()
	w.least = min(w.least, avail)
	w.mu.Unlock()
}

// stop ends the watch, once, and returns what it saw.
func (w *machineWatch) stop() (least, swapped, killed uint64) {
	w.once.Do(func() {
		close(w.done)
		w.sample()
		s, k, err := vmstat()
		w.mu.Lock()
		defer w.mu.Unlock()
		if err == nil {
			w.swapped, w.killed = s-w.swapped0, k-w.killed0
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.least, w.swapped, w.killed
}

// vmstat reads the machine's pages swapped out and OOM kills since boot.
func vmstat() (swapped, killed uint64, err error) {
	f, err := os.Open("/proc/vmstat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "pswpout":
			swapped, _ = strconv.ParseUint(v, 10, 64)
		case "oom_kill":
			killed, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return swapped, killed, sc.Err()
}

// memAvailable reads the machine's MemAvailable, in bytes.
func memAvailable() (uint64, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, err
	}
	if mi.MemAvailableBytes == nil {
		return 0, errors.New("no MemAvailable in /proc/meminfo")
	}
	return *mi.MemAvailableBytes, nil
}
