package thirdparty_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/thirdparty"
	"oplab.dev/oplab/internal/podexec"
)

// The course's manifests, as its chapter writes them; only the version
// (Debian packages PostgreSQL 15, not 16) and, for Redis, the images (the
// operator's default, redis:6.2.6-alpine, is on a registry, and its pull
// policy Always) differ.
const (
	postgresManifest = `apiVersion: acid.zalan.do/v1
kind: postgresql
metadata:
  name: my-postgres-cluster
  namespace: default
spec:
  teamId: platform
  volume:
    size: 1Gi
  numberOfInstances: 2
  users:
    app_user: [superuser, createdb]
  databases:
    app_db: app_user
  postgresql:
    version: "15"
`
	redisManifest = `apiVersion: databases.spotahome.com/v1
kind: RedisFailover
metadata:
  name: my-redis
  namespace: default
spec:
  sentinel:
    replicas: 3
    image: ` + thirdparty.RedisImage + `
    imagePullPolicy: IfNotPresent
  redis:
    replicas: 3
    image: ` + thirdparty.RedisImage + `
    imagePullPolicy: IfNotPresent
`
)

// TestKindZalandoFailover is Zalando's postgres-operator for real, offline:
// its chart installed as the course installs it, the course's postgresql
// manifest made Running by Patroni on the Spilo-compatible image, a row
// written through the leader; then the leader's pod is deleted, and
// Patroni's new leader (by patronictl, spilo-role and the Service's
// endpoints alike) takes writes, with the row kept.
//
// Then the check the Zalando lab's learners are graded by, the engine's
// patroniLeader, is run against that cluster (gradePatroni): make test's
// kind phase holds it to the real operator's, Patroni's and PostgreSQL's
// answers, not only the labs' self-tests of make test-kind.
func TestKindZalandoFailover(t *testing.T) {
	r := zalandoFailover(t)
	t.Logf("ready %s (cluster %s), failover %s, node %.0f MiB", r.ready.Round(time.Second), r.cluster.Round(time.Second), r.failover.Round(100*time.Millisecond), r.mib)
	gradePatroni(t, r)
}

// run is what one end-to-end measured: from nothing to the manifest
// ready (cluster included), the cluster alone, from the leader's or
// master's deletion to a new one taking writes, and the node's memory then.
type run struct {
	ready, cluster, failover time.Duration
	mib                      float64
	// c is the kind cluster, there until the test ends; deleted is the
	// leader's or master's pod the failover deleted, next the one that
	// took over.
	c             *clustertest.Cluster
	deleted, next string
}

func zalandoFailover(t testing.TB) run {
	var r run
	began := time.Now()
	c := clustertest.NewKind(t)
	r.cluster = time.Since(began)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	installOperator(t, ctx, c, thirdparty.Zalando)
	apply(t, ctx, c, postgresManifest)
	sel := "application=spilo,cluster-name=my-postgres-cluster"
	leader := waitFor(t, ctx, "2 ready spilo pods, one of them master", 8*time.Minute, func() (string, bool) {
		return roleOf(ctx, c.Client, sel, "spilo-role", "master", 2)
	})
	if _, err := c.Client.CoreV1().Secrets("default").Get(ctx, "app-user.my-postgres-cluster.credentials.postgresql.acid.zalan.do", metav1.GetOptions{}); err != nil {
		// Zalando turns the user's _ into - in the Secret's name.
		t.Errorf("the generated credentials Secret: %v", err)
	}
	// A pod is ready, and Patroni lists it running, before its replica
	// streams: deleting the leader then loses what was not received.
	waitFor(t, ctx, "the replica streaming from Patroni's leader", 5*time.Minute, func() (string, bool) {
		got, _ := patroniMembers(ctx, c, leader)
		out, err := podexec.Run(ctx, c.Config, "default", leader, "postgres", "psql", "-XqtA", "-U", "postgres", "-d", "postgres",
			"-c", "select count(*) from pg_stat_replication where state = 'streaming'")
		return fmt.Sprintf("leader %q, %s streaming (%v)", got, strings.TrimSpace(out), err), got == leader && strings.TrimSpace(out) == "1"
	})
	r.ready = time.Since(began)
	r.mib, _ = clustertest.KindNodeMemory(ctx, c.Name)
	psql(t, ctx, c, leader, "create table kept (x int); insert into kept values (1)")
	// Written on the replica too before the leader goes (replication is
	// asynchronous, as the chart's default).
	waitFor(t, ctx, "the row on the replica", time.Minute, func() (string, bool) {
		for _, p := range podsOf(ctx, c, sel) {
			if p == leader {
				continue
			}
			out, err := podexec.Run(ctx, c.Config, "default", p, "postgres", "psql", "-XqtA", "-U", "postgres", "-d", "postgres", "-c", "select count(*) from kept")
			return fmt.Sprintf("%s: %s %v", p, strings.TrimSpace(out), err), err == nil && strings.TrimSpace(out) == "1"
		}
		return "no replica", false
	})

	deleted := time.Now()
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	next := waitFor(t, ctx, "a new leader that takes writes", 5*time.Minute, func() (string, bool) {
		p, ok := roleOf(ctx, c.Client, sel, "spilo-role", "master", 1)
		if !ok || p == leader {
			return p, false
		}
		if _, err := podexec.Run(ctx, c.Config, "default", p, "postgres", "psql", "-XqtA", "-U", "postgres", "-d", "postgres",
			"-c", "insert into kept values (2)"); err != nil {
			return p, false
		}
		took = time.Since(deleted)
		return p, true
	})
	t.Logf("leader %s deleted; %s took writes after %s", leader, next, took.Round(100*time.Millisecond))
	r.failover, r.c, r.deleted, r.next = took, c, leader, next
	if got := strings.TrimSpace(psql(t, ctx, c, next, "select count(*) from kept")); got != "2" {
		t.Errorf("rows on the new leader: got %s, want 2 (the one written before the failover kept)", got)
	}
	if got, _ := patroniMembers(ctx, c, next); got != next {
		t.Errorf("patronictl list names %q the leader, want %s", got, next)
	}
	// Patroni writes the Service's endpoints once it holds the leader lock,
	// which may be a moment after its PostgreSQL takes writes: the old
	// leader cleared them as it stopped.
	want := podIP(t, ctx, c, next)
	waitFor(t, ctx, "Service my-postgres-cluster to point at the new leader "+next+" ("+want+")", time.Minute, func() (string, bool) {
		ip := endpointIP(t, ctx, c, "my-postgres-cluster")
		return ip, ip == want
	})
	t.Logf("Service my-postgres-cluster points at %s %s after the leader's delete", next, time.Since(deleted).Round(100*time.Millisecond))
	return r
}

// TestKindSpotahomeFailover is Spotahome's redis-operator for real,
// offline: the course's RedisFailover of 3 Redis and 3 Sentinel pods, a key
// written to the master Sentinel names; then the master's pod is deleted,
// Sentinel names another master, and the key is read back from it.
//
// Then the check the Spotahome lab's learners are graded by, the engine's
// sentinelMaster, is run against that RedisFailover (gradeSentinel).
func TestKindSpotahomeFailover(t *testing.T) {
	r := spotahomeFailover(t)
	t.Logf("ready %s (cluster %s), failover %s, node %.0f MiB", r.ready.Round(time.Second), r.cluster.Round(time.Second), r.failover.Round(100*time.Millisecond), r.mib)
	gradeSentinel(t, r)
}

func spotahomeFailover(t testing.TB) run {
	var r run
	began := time.Now()
	c := clustertest.NewKind(t)
	r.cluster = time.Since(began)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	installOperator(t, ctx, c, thirdparty.Spotahome)
	apply(t, ctx, c, redisManifest)
	waitFor(t, ctx, "3 ready sentinels", 6*time.Minute, func() (string, bool) {
		return ready(ctx, c.Client, "app.kubernetes.io/component=sentinel,app.kubernetes.io/name=my-redis", 3)
	})
	waitFor(t, ctx, "3 ready redis pods", 6*time.Minute, func() (string, bool) {
		return ready(ctx, c.Client, "app.kubernetes.io/component=redis,app.kubernetes.io/name=my-redis", 3)
	})
	master := waitFor(t, ctx, "the master Sentinel names", 3*time.Minute, func() (string, bool) {
		p, err := sentinelMaster(ctx, c)
		return p, err == nil
	})
	redis(t, ctx, c, master, "SET", "kept", "before-the-failover")
	r.ready = time.Since(began)
	r.mib, _ = clustertest.KindNodeMemory(ctx, c.Name)

	deleted := time.Now()
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, master, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	next := waitFor(t, ctx, "Sentinel to name a new master that takes writes", 5*time.Minute, func() (string, bool) {
		p, err := sentinelMaster(ctx, c)
		if err != nil || p == master {
			return p, false
		}
		if out, err := podexec.Run(ctx, c.Config, "default", p, "redis", "redis-cli", "SET", "after", "1"); err != nil || !strings.Contains(out, "OK") {
			return p, false
		}
		took = time.Since(deleted)
		return p, true
	})
	t.Logf("master %s deleted; %s took writes after %s", master, next, took.Round(100*time.Millisecond))
	r.failover, r.c, r.deleted, r.next = took, c, master, next
	if got := strings.TrimSpace(redis(t, ctx, c, next, "GET", "kept")); got != "before-the-failover" {
		t.Errorf("the key on the new master: got %q, want the value written before the failover", got)
	}
	return r
}

// BenchmarkKindThirdParty measures each third-party operator on kind, as
// BenchmarkKindSession (internal/operator/install) does the reference one:
// s/ready from nothing to the course's manifest ready (a kind cluster, the
// images loaded, the chart installed, Patroni's replica streaming or
// Sentinel naming a master), s-cluster the kind cluster alone, s-failover
// from deleting the leader's or master's pod to a new one taking writes,
// MiB-node the node's memory once ready. Gated like the tests.
func BenchmarkKindThirdParty(b *testing.B) {
	for _, bc := range []struct {
		name string
		run  func(testing.TB) run
	}{{"zalando-patroni", zalandoFailover}, {"spotahome-sentinel", spotahomeFailover}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				r := bc.run(b)
				b.ReportMetric(r.ready.Seconds(), "s/ready")
				b.ReportMetric(r.cluster.Seconds(), "s-cluster")
				b.ReportMetric(r.failover.Seconds(), "s-failover")
				b.ReportMetric(r.mib, "MiB-node")
			}
		})
	}
}

func installOperator(t testing.TB, ctx context.Context, c *clustertest.Cluster, o thirdparty.Operator) {
	t.Helper()
	bin := t.TempDir()
	if err := o.Extract(bin); err != nil {
		t.Fatal(err)
	}
	in, err := o.Installer(c.Provider, c.Name, bin, 5*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(ctx); err != nil {
		t.Fatalf("install %s: %v", o.Name, err)
	}
}

// apply creates the object of manifest.
func apply(t testing.TB, ctx context.Context, c *clustertest.Cluster, manifest string) {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	gvk := u.GroupVersionKind()
	plural := strings.ToLower(gvk.Kind) + "s"
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: plural}
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, &u, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil // the CRD may not be served yet
	})
	if err != nil {
		t.Fatalf("create %s %s: %v", gvk.Kind, u.GetName(), err)
	}
}

// waitFor polls cond every second until it is done, and returns what it
// found; the test fails, saying what it waited for and what was last
// found, when within passes.
func waitFor(t testing.TB, ctx context.Context, what string, within time.Duration, cond func() (string, bool)) string {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, within, true, func(context.Context) (bool, error) {
		var ok bool
		last, ok = cond()
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s (last: %q): %v", what, last, err)
	}
	return last
}

// ready says whether n pods of sel are Ready.
func ready(ctx context.Context, cs kubernetes.Interface, sel string, n int) (string, bool) {
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return err.Error(), false
	}
	got := 0
	for _, p := range pods.Items {
		if podReady(p) {
			got++
		}
	}
	return fmt.Sprintf("%d of %d ready", got, len(pods.Items)), got == n
}

// roleOf returns the one ready pod of sel labelled label=value, once n
// pods of sel are ready.
func roleOf(ctx context.Context, cs kubernetes.Interface, sel, label, value string, n int) (string, bool) {
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return err.Error(), false
	}
	readyN, with := 0, []string{}
	for _, p := range pods.Items {
		if !podReady(p) || p.DeletionTimestamp != nil {
			continue
		}
		readyN++
		if p.Labels[label] == value {
			with = append(with, p.Name)
		}
	}
	if readyN < n || len(with) != 1 {
		return fmt.Sprintf("%d ready, labelled %s=%s: %v", readyN, label, value, with), false
	}
	return with[0], true
}

// podsOf names the pods of sel.
func podsOf(ctx context.Context, c *clustertest.Cluster, sel string) []string {
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name)
	}
	return out
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func psql(t testing.TB, ctx context.Context, c *clustertest.Cluster, pod, sql string) string {
	t.Helper()
	out, err := podexec.Run(ctx, c.Config, "default", pod, "postgres", "psql", "-XqtA", "-U", "postgres", "-d", "postgres", "-c", sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// patroniMembers is the leader `patronictl list` names in pod, as the
// course asks, and how many members run.
func patroniMembers(ctx context.Context, c *clustertest.Cluster, pod string) (string, int) {
	out, err := podexec.Run(ctx, c.Config, "default", pod, "postgres", "patronictl", "-c", "/home/postgres/postgres.yml", "list", "-f", "json")
	if err != nil {
		return err.Error(), 0
	}
	var members []struct{ Member, Role, State string }
	if err := yaml.Unmarshal([]byte(out), &members); err != nil {
		return err.Error(), 0
	}
	leader, running := "", 0
	for _, m := range members {
		if m.Role == "Leader" {
			leader = m.Member
		}
		if m.State == "running" || m.State == "streaming" {
			running++
		}
	}
	return leader, running
}

// sentinelMaster is the pod at the address every Sentinel gives for
// mymaster, when they agree and it answers as a master.
func sentinelMaster(ctx context.Context, c *clustertest.Cluster) (string, error) {
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=my-redis"})
	if err != nil {
		return "", err
	}
	byIP := map[string]string{}
	answers := map[string]bool{}
	for _, p := range pods.Items {
		if p.Labels["app.kubernetes.io/component"] == "redis" && p.DeletionTimestamp == nil {
			byIP[p.Status.PodIP] = p.Name
			continue
		}
		if p.Labels["app.kubernetes.io/component"] != "sentinel" || !podReady(p) {
			continue
		}
		out, err := podexec.Run(ctx, c.Config, "default", p.Name, "sentinel", "redis-cli", "-p", "26379", "SENTINEL", "get-master-addr-by-name", "mymaster")
		if err != nil {
			return "", err
		}
		answers[strings.Fields(out + " ")[0]] = true
	}
	if len(answers) != 1 {
		return "", fmt.Errorf("the Sentinels disagree: %v", answers)
	}
	for ip := range answers {
		p, ok := byIP[ip]
		if !ok {
			return "", fmt.Errorf("no redis pod at %s", ip)
		}
		out, err := podexec.Run(ctx, c.Config, "default", p, "redis", "redis-cli", "ROLE")
		if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "master") {
			return "", fmt.Errorf("%s at %s answers ROLE %q (%v)", p, ip, out, err)
		}
		return p, nil
	}
	return "", nil
}

func redis(t testing.TB, ctx context.Context, c *clustertest.Cluster, pod string, args ...string) string {
	t.Helper()
	out, err := podexec.Run(ctx, c.Config, "default", pod, "redis", append([]string{"redis-cli"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func endpointIP(t testing.TB, ctx context.Context, c *clustertest.Cluster, svc string) string {
	t.Helper()
	ep, err := c.Client.CoreV1().Endpoints("default").Get(ctx, svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			return a.IP
		}
	}
	return ""
}

func podIP(t testing.TB, ctx context.Context, c *clustertest.Cluster, pod string) string {
	t.Helper()
	p, err := c.Client.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Status.PodIP
}
