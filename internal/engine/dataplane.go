package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/operator/thirdparty"
	"oplab.dev/oplab/internal/podexec"
)

// The labs of third-party operators judge their real data plane: Patroni
// and PostgreSQL for Zalando's operator, Sentinel and Redis for
// Spotahome's. A pod is picked by its labels, but what passes is what the
// servers say: a pod relabelled by hand or a status edited is found out.

// labOperator is the operator a lab runs, set by use from the lab in
// hand: every entry point that takes a lab calls it.
type labOperator struct {
	mu  sync.Mutex
	rel install.Release
	// name is the lab's third-party operator ("" for the reference).
	name string
	set  bool
	// logs is a third-party operator's log, unless fixedLogs: the Target
	// named its own source.
	logs      LogSource
	fixedLogs bool
	// lab is the lab in hand.
	lab string
	// learnerWrites: the lab's controller is the learner's (see
	// budget).
	learnerWrites bool
	// probes orders the checks of a learner's controller.
	probes probeLock
}

// use makes l's operator the one operatorReady, stopOperator, startOperator
// and the operator's log act on. A session's engine has one lab; a
// self-test's engine takes one lab after another. An operator oplab does
// not know leaves the reference one; installing it fails, saying so.
func (e *Engine) use(l *lab.Lab) {
	rel, name := install.Reference, ""
	var learnerLogs LogSource
	if l.LearnerWritesController() {
		if r, err := learnerRelease(l.ID); err == nil {
			rel, learnerLogs = r, e.learnerLog(l.ID)
		}
	} else if o, err := thirdparty.Find(l.Operator); err == nil {
		rel, name = o.Release, o.Name
	}
	e.op.mu.Lock()
	defer e.op.mu.Unlock()
	e.op.rel, e.op.name, e.op.set, e.op.logs, e.op.lab = rel, name, true, nil, l.ID
	e.op.learnerWrites = l.LearnerWritesController()
	switch {
	case e.op.fixedLogs:
	case learnerLogs != nil:
		e.op.logs = learnerLogs
	case rel != install.Reference:
		e.op.logs = e.operatorLog(rel)
	}
}

// labID is the lab in hand (see use).
func (e *Engine) labID() string {
	e.op.mu.Lock()
	defer e.op.mu.Unlock()
	return e.op.lab
}

// logSource is where the lab's operator's log is read.
func (e *Engine) logSource() LogSource {
	e.op.mu.Lock()
	defer e.op.mu.Unlock()
	if e.op.logs != nil {
		return e.op.logs
	}
	return e.logs
}

// operator is where the lab's operator runs.
func (e *Engine) operator() install.Release {
	e.op.mu.Lock()
	defer e.op.mu.Unlock()
	if !e.op.set {
		return install.Reference
	}
	return e.op.rel
}

// installThirdParty installs a third-party operator from its chart.
func (e *Engine) installThirdParty(ctx context.Context, name string) error {
	if e.learner {
		return fmt.Errorf("install %s: a learner cannot, it takes the cluster's admin: %w", name, ErrUnsupported)
	}
	if e.t.Provider == nil {
		return fmt.Errorf("install %s: no cluster provider: %w", name, ErrUnsupported)
	}
	o, err := thirdparty.Find(name)
	if err != nil {
		return err
	}
	in, err := e.thirdPartyInstaller(ctx, o)
	if err != nil {
		return err
	}
	_, err = in.Install(ctx)
	return err
}

// thirdPartyInstaller is o's installer into the target's cluster, with the time
// left in ctx (five minutes when it has no deadline).
func (e *Engine) thirdPartyInstaller(ctx context.Context, o thirdparty.Operator) (*install.Installer, error) {
	timeout := 5 * time.Minute
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	return o.Installer(e.t.Provider, e.t.Cluster, e.t.BinDir, timeout, e.log)
}

// uninstallThirdParty removes a lab's third-party operator at its
// teardown, once what its custom resources made is gone: the operator
// deletes a cluster's StatefulSet, pods and (Zalando's) claims itself, and
// would leave them behind if it went first. Claims still there then are
// deleted. Its CRDs stay, as Helm leaves them.
func (e *Engine) uninstallThirdParty(ctx context.Context, name string) error {
	o, err := thirdparty.Find(name)
	if err != nil {
		return err
	}
	if e.t.Provider == nil {
		return fmt.Errorf("uninstall %s: no cluster provider: %w", name, ErrUnsupported)
	}
	managed := metav1.ListOptions{LabelSelector: o.Managed}
	var left []string
	err = wait.PollUntilContextTimeout(ctx, pollInterval, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := e.cs.CoreV1().Pods("").List(ctx, managed)
		if err != nil {
			return false, nil
		}
		left = left[:0]
		for _, p := range pods.Items {
			left = append(left, p.Namespace+"/"+p.Name)
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("uninstall %s: its pods %v are still there after their resources were deleted: %w", name, left, err)
	}
	claims, err := e.cs.CoreV1().PersistentVolumeClaims("").List(ctx, managed)
	if err != nil {
		return fmt.Errorf("uninstall %s: %w", name, err)
	}
	for _, c := range claims.Items {
		if err := e.cs.CoreV1().PersistentVolumeClaims(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return fmt.Errorf("uninstall %s: delete claim %s/%s: %w", name, c.Namespace, c.Name, err)
		}
	}
	in, err := e.thirdPartyInstaller(ctx, o)
	if err != nil {
		return err
	}
	return in.Uninstall(ctx)
}

// podReady says whether p's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podNamespace(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// readyPods returns the ready pods of p that are not being deleted.
func (e *Engine) readyPods(ctx context.Context, p lab.PodSelector) ([]corev1.Pod, error) {
	list, err := e.cs.CoreV1().Pods(podNamespace(p.Namespace)).List(ctx, metav1.ListOptions{LabelSelector: p.Selector})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !podReady(&p) || p.DeletionTimestamp != nil }), nil
}

// onePod returns the one ready pod p picks.
func (e *Engine) onePod(ctx context.Context, p lab.PodSelector) (*corev1.Pod, error) {
	pods, err := e.readyPods(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(pods) != 1 {
		names := make([]string, len(pods))
		for i, p := range pods {
			names[i] = p.Name
		}
		return nil, fmt.Errorf("%d ready pods match %s, want one: %v", len(pods), p.Selector, names)
	}
	return &pods[0], nil
}

func (e *Engine) waitPods(ctx context.Context, p *lab.WaitPods) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		ok, why := e.podsReady(ctx, &lab.PodsReady{PodSelector: p.PodSelector, Count: p.Count})
		last = why
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d ready pods of %s: %s: %w", p.Count, p.Selector, last, err)
	}
	return nil
}

func (e *Engine) podsReady(ctx context.Context, p *lab.PodsReady) (bool, string) {
	pods, err := e.readyPods(ctx, p.PodSelector)
	if err != nil {
		return false, err.Error()
	}
	return len(pods) == p.Count, fmt.Sprintf("%d of %d pods of %s ready", len(pods), p.Count, p.Selector)
}

// deletePod deletes the one ready pod p picks, records it in a, and
// waits until it is gone (or replaced by a pod of the same name).
func (e *Engine) deletePod(ctx context.Context, p *lab.DeletePod, a *Attempt) error {
	pod, err := e.onePod(ctx, p.PodSelector)
	if err != nil {
		return err
	}
	if a != nil {
		a.Deleted = pod.Name
	}
	pods := e.cs.CoreV1().Pods(pod.Namespace)
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}
	if p.Force {
		opts.GracePeriodSeconds = new(int64)
	}
	if err := pods.Delete(ctx, pod.Name, opts); ignoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || err == nil && cur.UID != pod.UID, nil
	})
	if err != nil {
		return fmt.Errorf("wait for pod %s to be gone: %w", pod.Name, err)
	}
	return nil
}

// execIn runs x's command in the one ready pod it picks.
func (e *Engine) execIn(ctx context.Context, x *lab.ExecInPod) (string, *corev1.Pod, error) {
	if e.learner {
		return "", nil, fmt.Errorf("exec in a pod: %w", ErrUnsupported)
	}
	pod, err := e.onePod(ctx, x.PodSelector)
	if err != nil {
		return "", nil, err
	}
	out, err := podexec.Run(ctx, e.cfg, pod.Namespace, pod.Name, x.Container, x.Command...)
	return out, pod, err
}

func (e *Engine) execInPod(ctx context.Context, x *lab.ExecInPod) error {
	_, _, err := e.execIn(ctx, x)
	return err
}

func (e *Engine) execOutput(ctx context.Context, x *lab.ExecOutput) (bool, string) {
	out, pod, err := e.execIn(ctx, &x.ExecInPod)
	if err != nil {
		return false, err.Error()
	}
	got := strings.TrimSpace(out)
	if !regexp.MustCompile(x.Want).MatchString(got) { // validated to compile
		return false, fmt.Sprintf("%s in %s printed %q, want %s", strings.Join(x.Command, " "), pod.Name, abbrev(got), x.Want)
	}
	return true, fmt.Sprintf("%s in %s printed %q", strings.Join(x.Command, " "), pod.Name, abbrev(got))
}

func abbrev(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// Zalando's operator and Spilo: the pods of cluster c are labelled
// application=spilo and cluster-name=c; the leader spilo-role=master.
const (
	spiloContainer = "postgres"
	spiloConfig    = "/home/postgres/postgres.yml"
)

// patroniLeader asks Patroni who leads cluster p.Cluster (patronictl list,
// as the course does, in every ready pod: they must agree), then checks
// that exactly that pod is labelled master, that its server is not in
// recovery, and that the cluster's Service points at it.
func (e *Engine) patroniLeader(ctx context.Context, p *lab.PatroniLeader, a *Attempt) (bool, string) {
	_, ok, why := e.patroniLead(ctx, p, a)
	return ok, why
}

// patroniLead is patroniLeader that also names the leader it verified.
func (e *Engine) patroniLead(ctx context.Context, p *lab.PatroniLeader, a *Attempt) (leader string, ok bool, why string) {
	fail := func(format string, args ...any) (string, bool, string) {
		return "", false, fmt.Sprintf(format, args...)
	}
	ns := podNamespace(p.Namespace)
	sel := lab.PodSelector{Namespace: ns, Selector: "application=spilo,cluster-name=" + p.Cluster}
	pods, err := e.readyPods(ctx, sel)
	if err != nil {
		return fail("%v", err)
	}
	if len(pods) == 0 {
		return fail("no ready pod of cluster %s", p.Cluster)
	}
	leaders := map[string]bool{}
	for _, pod := range pods {
		out, err := podexec.Run(ctx, e.cfg, ns, pod.Name, spiloContainer, "patronictl", "-c", spiloConfig, "list", "-f", "json")
		if err != nil {
			return fail("patronictl list in %s: %v", pod.Name, err)
		}
		var members []struct{ Member, Role, State string }
		if err := json.Unmarshal([]byte(out), &members); err != nil {
			return fail("patronictl list in %s: %v", pod.Name, err)
		}
		leader := ""
		for _, m := range members {
			if m.Role == "Leader" {
				leader = m.Member
			}
		}
		leaders[leader] = true
	}
	if len(leaders) != 1 || leaders[""] {
		return fail("Patroni names no single leader: %v", keys(leaders))
	}
	leader = keys(leaders)[0]
	var labelled []string
	var leaderPod *corev1.Pod
	for i := range pods {
		if pods[i].Labels["spilo-role"] == "master" {
			labelled = append(labelled, pods[i].Name)
		}
		if pods[i].Name == leader {
			leaderPod = &pods[i]
		}
	}
	if leaderPod == nil || !slices.Equal(labelled, []string{leader}) {
		return fail("Patroni's leader is %s, labelled spilo-role=master: %v", leader, labelled)
	}
	out, err := podexec.Run(ctx, e.cfg, ns, leader, spiloContainer, "psql", "-XqtA", "-U", "postgres", "-d", "postgres", "-c", "select pg_is_in_recovery()")
	if err != nil {
		return fail("ask the server of %s: %v", leader, err)
	}
	if strings.TrimSpace(out) != "f" {
		return fail("the server of %s is in recovery (pg_is_in_recovery() = %s)", leader, strings.TrimSpace(out))
	}
	if ok, why := e.serviceAt(ctx, ns, p.Cluster, leaderPod); !ok {
		return fail("%s", why)
	}
	if p.Members > 0 {
		// Patroni lists a member running before it streams (its slot is
		// made on the leader's next loop): a failover then loses what it
		// had not received. The leader's server says who streams.
		out, err := podexec.Run(ctx, e.cfg, ns, leader, spiloContainer, "psql", "-XqtA", "-U", "postgres", "-d", "postgres",
			"-c", "select count(*) from pg_stat_replication where state = 'streaming'")
		if err != nil {
			return fail("ask the server of %s: %v", leader, err)
		}
		if got := strings.TrimSpace(out); got != fmt.Sprint(p.Members-1) {
			return fail("%s replicas stream from the leader %s, want %d", got, leader, p.Members-1)
		}
	}
	if p.Changed && a != nil && a.Deleted == leader {
		return fail("the leader is still %s, the pod that was deleted", leader)
	}
	return leader, true, fmt.Sprintf("Patroni's leader %s is labelled master, writable, and behind Service %s", leader, p.Cluster)
}

// serviceAt says whether Service name's endpoints are exactly pod.
func (e *Engine) serviceAt(ctx context.Context, ns, name string, pod *corev1.Pod) (bool, string) {
	ep, err := e.cs.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("Service %s's endpoints: %v", name, err)
	}
	var ips []string
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			ips = append(ips, a.IP)
		}
	}
	if !slices.Equal(ips, []string{pod.Status.PodIP}) {
		return false, fmt.Sprintf("Service %s points at %v, want %s (%s)", name, ips, pod.Name, pod.Status.PodIP)
	}
	return true, ""
}

// Spotahome's RedisFailover name: Redis pods rfr-<name>-N (container
// redis), Sentinel pods rfs-<name>-N (container sentinel), the master
// group mymaster.
const (
	redisContainer    = "redis"
	sentinelContainer = "sentinel"
)

// sentinelMaster asks every ready Sentinel of p.Name for mymaster's
// address (they must agree), finds the Redis pod there, and asks every
// Redis who it is: that one must answer master, every other a replica of
// it.
func (e *Engine) sentinelMaster(ctx context.Context, p *lab.SentinelMaster, a *Attempt) (bool, string) {
	_, ok, why := e.sentinelLead(ctx, p, a)
	return ok, why
}

// sentinelLead is sentinelMaster that also names the master it verified.
func (e *Engine) sentinelLead(ctx context.Context, p *lab.SentinelMaster, a *Attempt) (master string, ok bool, why string) {
	fail := func(format string, args ...any) (string, bool, string) {
		return "", false, fmt.Sprintf(format, args...)
	}
	ns := podNamespace(p.Namespace)
	base := "app.kubernetes.io/name=" + p.Name + ",app.kubernetes.io/component="
	sentinels, err := e.readyPods(ctx, lab.PodSelector{Namespace: ns, Selector: base + "sentinel"})
	if err != nil {
		return fail("%v", err)
	}
	redises, err := e.readyPods(ctx, lab.PodSelector{Namespace: ns, Selector: base + "redis"})
	if err != nil {
		return fail("%v", err)
	}
	if len(sentinels) == 0 || len(redises) == 0 {
		return fail("%d ready Sentinels, %d ready Redis pods of %s", len(sentinels), len(redises), p.Name)
	}
	addrs := map[string]bool{}
	for _, s := range sentinels {
		out, err := podexec.Run(ctx, e.cfg, ns, s.Name, sentinelContainer, "redis-cli", "-p", "26379", "SENTINEL", "get-master-addr-by-name", "mymaster")
		if err != nil {
			return fail("ask Sentinel %s: %v", s.Name, err)
		}
		addrs[firstField(out)] = true
	}
	if len(addrs) != 1 || addrs[""] {
		return fail("the Sentinels do not agree on a master: %v", keys(addrs))
	}
	ip := keys(addrs)[0]
	for _, r := range redises {
		out, err := podexec.Run(ctx, e.cfg, ns, r.Name, redisContainer, "redis-cli", "ROLE")
		if err != nil {
			return fail("ask Redis %s: %v", r.Name, err)
		}
		role := strings.Fields(out)
		switch {
		case r.Status.PodIP == ip:
			if len(role) == 0 || role[0] != "master" {
				return fail("Sentinel names %s (%s) the master, but it answers ROLE %q", r.Name, ip, abbrev(out))
			}
			master = r.Name
		case len(role) < 2 || role[0] != "slave" || role[1] != ip:
			return fail("%s does not replicate from the master %s: ROLE %q", r.Name, ip, abbrev(out))
		}
	}
	if master == "" {
		return fail("Sentinel names %s the master, and no ready Redis pod has that address", ip)
	}
	if p.Changed && a != nil && a.Deleted == master {
		return fail("the master is still %s, the pod that was deleted", master)
	}
	return master, true, fmt.Sprintf("every Sentinel names %s the master, which it is, with %d replicas", master, len(redises)-1)
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
