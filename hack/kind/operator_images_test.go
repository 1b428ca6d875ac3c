package kind_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The images of the course's third-party operators that
// `make images-operators` builds (build-images.sh zalando redis); other
// parts of oplab name them by these tags.
const (
	zalandoImage   = "oplab.local/postgres-operator:v1.15.1"
	spiloImage     = "oplab.local/spilo:15"
	spotahomeImage = "oplab.local/redis-operator:v1.2.4"
	redisImage     = "oplab.local/redis:7.0.15"
)

// needImages skips unless the image tests are on (OPLAB_KIND_TEST=1, as
// `make images-operators` sets it after building) and fails when one of
// images is not in the engine.
func needImages(t *testing.T, images ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a container engine and `make images-operators`; -short")
	}
	if os.Getenv("OPLAB_KIND_TEST") != "1" {
		t.Skip("image tests skipped: run `make test-images-operators` (needs a container engine)")
	}
	for _, img := range images {
		if out, err := exec.Command("docker", "image", "inspect", "-f", "{{.Id}}", img).CombinedOutput(); err != nil {
			t.Fatalf("image %s: %v: %s (build it with `make images-operators`)", img, err, bytes.TrimSpace(out))
		}
	}
}

// engine runs docker commands for one test and removes what it started.
type engine struct {
	t   *testing.T
	ctx context.Context
}

func newEngine(t *testing.T, timeout time.Duration) *engine {
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return &engine{t: t, ctx: ctx}
}

// run is `docker args...`: its standard output and error, trimmed.
func (e *engine) run(args ...string) (stdout, stderr string, err error) {
	var o, s bytes.Buffer
	cmd := exec.CommandContext(e.ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &o, &s
	err = cmd.Run()
	return strings.TrimSpace(o.String()), strings.TrimSpace(s.String()), err
}

// start runs a detached container named after the test plus suffix,
// removed (with its anonymous volumes) when the test ends.
func (e *engine) start(suffix string, args ...string) string {
	e.t.Helper()
	name := "oplab-" + strings.ToLower(strings.ReplaceAll(e.t.Name(), "/", "-")) + "-" + suffix
	_, _, _ = e.run("rm", "-f", "-v", name)
	if out, stderr, err := e.run(append([]string{"run", "-d", "--name", name}, args...)...); err != nil {
		e.t.Fatalf("docker run %s: %v: %s %s", name, err, out, stderr)
	}
	e.t.Cleanup(func() { _, _ = exec.Command("docker", "rm", "-f", "-v", name).CombinedOutput() })
	return name
}

// shell runs script with sh -c in container, as the image's user.
func (e *engine) shell(container, script string) (string, error) {
	out, stderr, err := e.run("exec", container, "sh", "-c", script)
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, stderr)
	}
	return out, nil
}

// eventually retries script until it prints want, for up to budget.
func (e *engine) eventually(container, script, want string, budget time.Duration) (string, error) {
	deadline := time.Now().Add(budget)
	for {
		out, err := e.shell(container, script)
		if err == nil && out == want || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(time.Second)
	}
}

func (e *engine) logs(container string) string {
	out, stderr, _ := e.run("logs", "--tail", "40", container)
	return out + "\n" + stderr
}

// TestOperatorImagesStart runs each operator's image as its chart does
// (the image's entrypoint, uid 1000) outside Kubernetes: asked for help it
// lists its own flags, and started it gets as far as looking for the
// in-cluster configuration, which is not there.
func TestOperatorImagesStart(t *testing.T) {
	tests := []struct {
		image    string
		wantHelp []string // in the usage -help prints
		wantRun  []string // in what a start outside a cluster prints before it fails
	}{
		{zalandoImage, []string{"-outofcluster", "-nodatabaseaccess"},
			[]string{"Spilo operator v1.15.1", "KUBERNETES_SERVICE_HOST"}},
		{spotahomeImage, []string{"-listen-address", "-concurrency"},
			[]string{"inside cluster", "KUBERNETES_SERVICE_HOST"}},
	}
	for _, tt := range tests {
		t.Run(path.Base(tt.image), func(t *testing.T) {
			needImages(t, tt.image)
			e := newEngine(t, time.Minute)
			if user, _, _ := e.run("image", "inspect", "-f", "{{.Config.User}}", tt.image); user != "1000:1000" {
				t.Errorf("image user: got %q, want 1000:1000 (the chart's runAsUser)", user)
			}
			out, stderr, err := e.run("run", "--rm", tt.image, "-help")
			if err != nil {
				t.Fatalf("-help: %v\n%s\n%s", err, out, stderr)
			}
			for _, want := range tt.wantHelp {
				if !strings.Contains(out+stderr, want) {
					t.Errorf("-help: got %q, want it to mention %s", out+stderr, want)
				}
			}
			out, stderr, err = e.run("run", "--rm", tt.image)
			if err == nil {
				t.Fatalf("started outside a cluster: got success, want a failure to find the in-cluster configuration\n%s\n%s", out, stderr)
			}
			for _, want := range tt.wantRun {
				if !strings.Contains(out+stderr, want) {
					t.Errorf("start outside a cluster: got %q, want it to mention %q", out+stderr, want)
				}
			}
		})
	}
}

// operatorEnv is what Zalando's operator (pkg/cluster/k8sres.go,
// generateSpiloPodEnvVars) gives the pod of the course's
// my-postgres-cluster, with the variables the kubelet adds for the
// kubernetes Service; version is spec.postgresql.version.
func operatorEnv(version, password string) []string {
	spilo := fmt.Sprintf(`{"postgresql":{"bin_dir":"/usr/lib/postgresql/%s/bin","parameters":{"shared_buffers":"64MB"}},`+
		`"bootstrap":{"initdb":[{"auth-host":"md5"},{"auth-local":"trust"}],"dcs":{"ttl":20,"postgresql":{"parameters":{"max_connections":"50"}}}}}`, version)
	return []string{
		"SCOPE=my-postgres-cluster", "PGROOT=/home/postgres/pgdata/pgroot", "POD_IP=10.244.0.7", "POD_NAMESPACE=labs",
		"PGUSER_SUPERUSER=postgres", "PGPASSWORD_SUPERUSER=" + password,
		"PGUSER_STANDBY=standby", "PGPASSWORD_STANDBY=standby-secret",
		"KUBERNETES_SCOPE_LABEL=cluster-name", "KUBERNETES_ROLE_LABEL=spilo-role",
		"PAM_OAUTH2=", "HUMAN_ROLE=zalandos",
		`KUBERNETES_LABELS={"application":"spilo"}`, "SPILO_CONFIGURATION=" + spilo, "DCS_ENABLE_KUBERNETES_API=true",
		"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443",
	}
}

func envArgs(env []string) []string {
	var args []string
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	return args
}

// at is the value at a dotted path of a parsed YAML document (a number
// indexes a list).
func at(doc any, path string) any {
	for _, key := range strings.Split(path, ".") {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i >= len(v) {
				return nil
			}
			doc = v[i]
		default:
			return nil
		}
	}
	return doc
}

// TestSpiloEntrypointConfig runs the spilo image's entry point in its
// configure mode with the variables Zalando's operator sets, and reads the
// postgres.yml it writes: Patroni's Kubernetes DCS as the operator expects
// it (endpoints, labels), the users from the environment, the operator's
// SPILO_CONFIGURATION over Spilo's defaults, and a file Patroni's own
// validator accepts. A version the image lacks fails, saying which it has.
func TestSpiloEntrypointConfig(t *testing.T) {
	needImages(t, spiloImage)
	// A password YAML would have to quote: the file must round-trip it.
	const password = `p'a:ss "w#rd`
	t.Run("version 15", func(t *testing.T) {
		e := newEngine(t, 2*time.Minute)
		script := `python3 /scripts/entrypoint.py configure >&2 && stat -c 'mode=%a owner=%U' /home/postgres/postgres.yml >&2 &&
			{ patroni --validate-config /home/postgres/postgres.yml 2>&1 | sed 's/^/validate: /' >&2; cat /home/postgres/postgres.yml; }`
		args := append([]string{"run", "--rm", "--hostname", "my-postgres-cluster-0"}, envArgs(operatorEnv("15", password))...)
		out, stderr, err := e.run(append(args, spiloImage, "sh", "-c", script)...)
		if err != nil {
			t.Fatalf("configure: %v\n%s\n%s", err, stderr, out)
		}
		if !strings.Contains(stderr, "mode=600 owner=postgres") {
			t.Errorf("postgres.yml: got %q, want mode 600 owned by postgres (it holds the passwords)", stderr)
		}
		// Patroni 3.0.2's validator also requires two keys that Patroni does
		// not (later versions dropped them from the schema): Spilo sets
		// neither, and neither does this image.
		for _, line := range strings.Split(stderr, "\n") {
			if problem, ok := strings.CutPrefix(line, "validate: "); ok &&
				problem != "bootstrap.pg_hba  is not defined." && problem != "postgresql.authentication.rewind  is not defined." {
				t.Errorf("patroni --validate-config: %s", problem)
			}
		}
		var doc any
		if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("postgres.yml is not YAML: %v\n%s", err, out)
		}
		for _, tt := range []struct {
			path string
			want any
		}{
			{"scope", "my-postgres-cluster"},
			{"name", "my-postgres-cluster-0"},
			{"restapi.listen", "*:8008"},
			{"restapi.connect_address", "10.244.0.7:8008"},
			{"kubernetes.use_endpoints", true},
			{"kubernetes.pod_ip", "10.244.0.7"},
			{"kubernetes.ports.0.port", float64(5432)},
			{"kubernetes.namespace", "labs"},
			{"kubernetes.labels.application", "spilo"},
			{"kubernetes.scope_label", "cluster-name"},
			{"kubernetes.role_label", "spilo-role"},
			{"postgresql.connect_address", "10.244.0.7:5432"},
			{"postgresql.data_dir", "/home/postgres/pgdata/pgroot/data"},
			{"postgresql.bin_dir", "/usr/lib/postgresql/15/bin"},
			{"postgresql.authentication.superuser.username", "postgres"},
			{"postgresql.authentication.superuser.password", password},
			{"postgresql.authentication.replication.username", "standby"},
			{"postgresql.authentication.replication.password", "standby-secret"},
			{"postgresql.parameters.ssl", "on"},
			{"postgresql.parameters.shared_buffers", "64MB"}, // the operator's, over Spilo's share of memory
			{"postgresql.pg_hba.4", "hostssl replication standby all md5"},
			{"bootstrap.dcs.ttl", float64(20)},       // the operator's
			{"bootstrap.dcs.loop_wait", float64(10)}, // Spilo's default
			{"bootstrap.dcs.postgresql.parameters.max_connections", "50"},
			{"bootstrap.dcs.postgresql.use_pg_rewind", true},
			{"bootstrap.initdb.0.auth-host", "md5"}, // the operator's list replaces Spilo's
			{"bootstrap.initdb.2", nil},
			{"bootstrap.post_init", "/usr/bin/python3 /scripts/entrypoint.py post-init zalandos"}, // HUMAN_ROLE
		} {
			if got := at(doc, tt.path); got != tt.want {
				t.Errorf("%s: got %#v, want %#v", tt.path, got, tt.want)
			}
		}
	})
	t.Run("version 16", func(t *testing.T) {
		e := newEngine(t, time.Minute)
		args := append([]string{"run", "--rm"}, envArgs(operatorEnv("16", password))...)
		out, stderr, err := e.run(append(args, spiloImage, "python3", "/scripts/entrypoint.py", "configure")...)
		if err == nil {
			t.Fatalf("configure for PostgreSQL 16: got success, want a failure\n%s", out)
		}
		if want := `has PostgreSQL 15 only: set spec.postgresql.version to "15"`; !strings.Contains(stderr, want) {
			t.Errorf("configure for PostgreSQL 16: got %q, want %q", stderr, want)
		}
	})
}

// TestSpiloImageBootstraps runs the spilo image as the operator's pod does
// (no command, the operator's variables, root) with etcd in place of the
// Kubernetes API as Patroni's DCS: Patroni initialises PostgreSQL and
// leads, its REST API answers the readiness probe, `patronictl -c
// /home/postgres/postgres.yml list` (the course's command) shows the
// leader, PostgreSQL runs as postgres, the superuser logs in with its
// password over SSL, as the operator does (sslmode=require), and the roles
// the operator's users join exist.
func TestSpiloImageBootstraps(t *testing.T) {
	etcd := etcdImage(t)
	needImages(t, spiloImage, etcd)
	e := newEngine(t, 4*time.Minute)
	// The pod's network namespace (and so its hostname) is etcd's.
	dcs := e.start("etcd", "--hostname", "my-postgres-cluster-0", etcd, "etcd", "--data-dir=/tmp/etcd", "--listen-client-urls=http://127.0.0.1:2379",
		"--advertise-client-urls=http://127.0.0.1:2379", "--listen-peer-urls=http://127.0.0.1:2380")
	const password = "su-secret"
	env := []string{}
	for _, kv := range operatorEnv("15", password) {
		if !strings.HasPrefix(kv, "KUBERNETES_SERVICE_") && !strings.HasPrefix(kv, "POD_IP=") {
			env = append(env, kv)
		}
	}
	env = append(env, "ETCD3_HOST=127.0.0.1:2379", "POD_IP=127.0.0.1")
	args := append([]string{"--network", "container:" + dcs}, envArgs(env)...)
	pod := e.start("spilo", append(args, spiloImage)...)

	readiness := `python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:8008/readiness").status)'`
	if out, err := e.eventually(pod, readiness+" 2>/dev/null || echo down", "200", 3*time.Minute); out != "200" {
		t.Fatalf("GET :8008/readiness: got %q (%v), want 200\n%s", out, err, e.logs(pod))
	}
	out, err := e.shell(pod, "patronictl -c /home/postgres/postgres.yml list -f json")
	if err != nil {
		t.Fatalf("patronictl list: %v", err)
	}
	var members []struct{ Member, Role, State string }
	if err := json.Unmarshal([]byte(out), &members); err != nil || len(members) != 1 {
		t.Fatalf("patronictl list: got %q (%v), want one member", out, err)
	}
	if m := members[0]; m.Member != "my-postgres-cluster-0" || m.Role != "Leader" || m.State != "running" {
		t.Errorf("patronictl list: got %+v, want my-postgres-cluster-0 Leader running", m)
	}
	login := fmt.Sprintf(`PGPASSWORD=%s psql "host=127.0.0.1 dbname=postgres user=postgres sslmode=require" -tAc `, password)
	for _, tt := range []struct{ script, want string }{
		{login + `"select ssl from pg_stat_ssl where pid = pg_backend_pid()"`, "t"},
		{login + `"select pg_is_in_recovery()"`, "f"},
		{login + `"select rolreplication from pg_roles where rolname = 'standby'"`, "t"},
		// The roles Spilo's post_init makes; the operator creates users IN ROLE admin.
		{login + `"select string_agg(rolname || ':' || rolcanlogin, ' ' order by rolname) from pg_roles where rolname in ('admin', 'cron_admin', 'robot_zmon', 'zalandos')"`,
			"admin:false cron_admin:false robot_zmon:false zalandos:false"},
		{login + `"select pg_has_role('admin', 'cron_admin', 'member')"`, "t"},
		{`PGPASSWORD=wrong psql "host=127.0.0.1 dbname=postgres user=postgres sslmode=require" -tAc 'select 1' 2>&1 | grep -c 'password authentication failed'`, "1"},
		{`stat -c %U /home/postgres/pgdata/pgroot/data`, "postgres"},
		{`ps -o user= -C postgres | sort -u`, "postgres"},
	} {
		if got, err := e.shell(pod, tt.script); got != tt.want {
			t.Errorf("%s: got %q (%v), want %q", tt.script, got, err, tt.want)
		}
	}
}

// etcdImage is the etcd image `make images` builds for the kind node.
func etcdImage(t *testing.T) string {
	out, _ := exec.Command("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "registry.k8s.io/etcd").Output()
	if img, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); img != "" {
		return img
	}
	return "registry.k8s.io/etcd (built by `make images`)"
}
