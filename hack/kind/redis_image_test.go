package kind_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The configurations Spotahome's operator writes
// (operator/redisfailover/service/generator.go): each Redis starts as a
// replica of itself until the operator names a master; each Sentinel
// monitors the master the operator tells it (here: one Sentinel, quorum 1).
const (
	redisConf = `slaveof 127.0.0.1 6379
port 6379
tcp-keepalive 60
save 900 1
save 300 10
user pinger -@all +ping on >pingpass`
	sentinelConf = `sentinel monitor mymaster %s 6379 1
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 3000
sentinel parallel-syncs mymaster 2`
)

// TestRedisImage runs the redis image as the operator's pods run it: uid
// 1000, a read-only root, the configuration mounted at /redis, data in
// /data, `redis-server /redis/redis.conf` and `redis-server
// /redis/sentinel.conf --sentinel`. Clients from the pod's own address
// (not loopback, as replicas, Sentinels and the probes are) are served,
// the probes' and scripts' commands work (redis-cli, hostname -i, tr,
// cut), a SAVE writes /data, and Sentinel names the master; a
// configuration that asks for protected mode keeps it.
func TestRedisImage(t *testing.T) {
	needImages(t, redisImage)
	e := newEngine(t, 2*time.Minute)
	// A network of its own gives the container an address that is not
	// loopback; the test's clients run in the same network namespace.
	network := "oplab-redis-image-test"
	_, _, _ = e.run("network", "rm", network)
	if out, stderr, err := e.run("network", "create", network); err != nil {
		t.Fatalf("docker network create: %v: %s %s", err, out, stderr)
	}
	// Not e.run: the test's context is cancelled before its cleanups run.
	t.Cleanup(func() { _, _ = exec.Command("docker", "network", "rm", network).CombinedOutput() })
	mounts := []string{"--read-only", "--mount", "type=tmpfs,destination=/redis,tmpfs-mode=1777"}
	redis := e.start("redis", append(append([]string{"--network", network, "-v", "/data"}, mounts...),
		redisImage, "sh", "-c", `printf '%s\n' "$0" > /redis/redis.conf && exec redis-server /redis/redis.conf`, redisConf)...)
	ip, err := e.shell(redis, "hostname -i")
	if err != nil || ip == "" {
		t.Fatalf("hostname -i: got %q (%v)\n%s", ip, err, e.logs(redis))
	}
	// The operator makes one Redis the master.
	if out, err := e.eventually(redis, "redis-cli -h $(hostname -i) SLAVEOF NO ONE", "OK", 30*time.Second); out != "OK" {
		t.Fatalf("SLAVEOF NO ONE from %s: got %q (%v), want OK (protected mode refuses clients not on loopback)\n%s", ip, out, err, e.logs(redis))
	}
	sentinel := e.start("sentinel", append(append([]string{"--network", "container:" + redis}, mounts...),
		redisImage, "sh", "-c", `printf '%s\n' "$0" > /redis/sentinel.conf && exec redis-server /redis/sentinel.conf --sentinel`,
		strings.Replace(sentinelConf, "%s", ip, 1))...)
	// The shutdown script's question to Sentinel, verbatim but for the
	// Service's variables.
	master := `redis-cli -h $(hostname -i) -p 26379 --csv SENTINEL get-master-addr-by-name mymaster | tr ',' ' ' | tr -d '\"' |cut -d' ' -f1`
	for _, tt := range []struct{ script, want string }{
		{"id -u", "1000"},
		{"redis-server --version | grep -o 'v=[0-9.]*'", "v=7.0.15"},
		// The liveness probe, verbatim: redis-cli sends its options after
		// the command as PING's arguments and prints the error Redis
		// answers, but exits 0 as long as Redis answers at all.
		{"redis-cli -h $(hostname) -p 6379 ping --user pinger --pass pingpass --no-auth-warning >/dev/null; echo $?", "0"},
		{"redis-cli -h $(hostname -i) SET oplab before-failover", "OK"},
		{"redis-cli -h $(hostname -i) SAVE && test -s /data/dump.rdb && stat -c %u /data/dump.rdb", "OK\n1000"},
		{"redis-cli -h $(hostname -i) info replication | grep role: | tr -d '\\r' | xargs", "role:master"}, // as ready.sh reads it
		{"redis-cli -h $(hostname) -p 26379 ping", "PONG"},                                                 // Sentinel's probes
		{`[ "$(` + master + `)" = "$(hostname -i)" ] && echo master`, "master"},
	} {
		if got, err := e.eventually(redis, tt.script, tt.want, 20*time.Second); got != tt.want {
			t.Errorf("%s: got %q (%v), want %q\nredis:\n%s\nsentinel:\n%s", tt.script, got, err, tt.want, e.logs(redis), e.logs(sentinel))
		}
	}
	// Protected mode stays on where a configuration asks for it, and then
	// refuses the same client: the check above could fail.
	if _, err := e.shell(redis, `printf 'port 6380\nprotected-mode yes\n' > /redis/protected.conf && redis-server /redis/protected.conf --daemonize yes --pidfile /redis/p.pid`); err != nil {
		t.Fatalf("start a protected Redis: %v", err)
	}
	if got, _ := e.eventually(redis, "redis-cli -h $(hostname -i) -p 6380 ping 2>&1 | grep -o DENIED", "DENIED", 10*time.Second); got != "DENIED" {
		t.Errorf("protected-mode yes in the configuration: got %q, want DENIED for a client not on loopback", got)
	}
}
