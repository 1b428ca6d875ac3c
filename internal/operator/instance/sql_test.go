package instance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLSN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    LSN
		wantErr bool
	}{
		{in: "0/0", want: 0},
		{in: "0/3000148", want: 0x3000148},
		{in: "16/B374D848", want: 0x16_B374D848},
		{in: "FFFFFFFF/FFFFFFFF", want: LSN(^uint64(0))},
		{in: "", wantErr: true},
		{in: "3000148", wantErr: true},
		{in: "0/xyz", wantErr: true},
		{in: "100000000/0", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseLSN(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseLSN(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if got != tt.want {
			t.Errorf("ParseLSN(%q) = %d, want %d", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParseLSN(%q).String() = %q, want the input back", tt.in, s)
		}
	}
}

// testCluster maps pod names to the loopback servers that play them.
type testCluster map[string]*pgServer

func (c testCluster) pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"}}
}

func (c testCluster) sql(password string) *SQL {
	return NewSQL(SQLOptions{
		Credentials: func(_ context.Context, pod *corev1.Pod) (string, string, error) {
			return testPGUser, password, nil
		},
		Address: func(pod *corev1.Pod) (string, int, error) {
			s, ok := c[pod.Name]
			if !ok {
				return "", 0, fmt.Errorf("no server for pod %s", pod.Name)
			}
			return "127.0.0.1", s.port, nil
		},
		ConnectTimeout: 3 * time.Second,
	})
}

// TestSQLAgainstPostgres drives real servers: a primary from initdb and two
// streaming standbys from pg_basebackup -R, on loopback.
func TestSQLAgainstPostgres(t *testing.T) {
	bins := findPGBinaries(t)
	work := bins.workDir(t)
	primary := startPrimary(t, bins, work)
	c := testCluster{"db-0": primary}
	c["db-1"] = startReplica(t, bins, work, "db-1", primary)
	c["db-2"] = startReplica(t, bins, work, "db-2", primary)
	s := c.sql(testPGPassword)
	if s.Mode() != ModeSQL {
		t.Errorf("Mode() = %q, want %q", s.Mode(), ModeSQL)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// Roles and LSNs as each server reports them.
	pst, err := s.Status(ctx, c.pod("db-0"))
	if err != nil {
		t.Fatalf("status of db-0: %v", err)
	}
	if !pst.IsPrimary() || pst.CurrentLSN == 0 || pst.ReceivedLSN != 0 || pst.ReplayedLSN != 0 {
		t.Fatalf("status of db-0 = %+v, want a primary with a current LSN and no receive/replay LSN", pst)
	}
	rst := waitStatus(ctx, t, s, c, "db-1", "streaming from the primary", func(st Status) bool {
		return st.Initialized && st.InRecovery && st.ReceivedLSN > 0 && st.ReplayedLSN > 0
	})
	if rst.CurrentLSN != 0 || rst.IsPrimary() {
		t.Errorf("status of db-1 = %+v, want a standby without a current LSN", rst)
	}

	// Writes advance the primary's LSN; the standbys receive and replay them.
	execSQL(ctx, t, primary, `CREATE TABLE t (id int primary key, v text)`,
		`INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 5000) g`)
	after, err := s.Status(ctx, c.pod("db-0"))
	if err != nil {
		t.Fatalf("status of db-0 after writes: %v", err)
	}
	if after.Position() <= pst.Position() {
		t.Fatalf("primary position after writes = %s, want more than %s", after.Position(), pst.Position())
	}
	for _, name := range []string{"db-1", "db-2"} {
		caught := waitStatus(ctx, t, s, c, name, "caught up with "+after.CurrentLSN.String(), func(st Status) bool {
			return st.ReceivedLSN >= after.CurrentLSN && st.ReplayedLSN >= after.CurrentLSN
		})
		if name == "db-1" && caught.ReplayedLSN <= rst.ReplayedLSN {
			t.Errorf("db-1 replay LSN = %s, want more than %s", caught.ReplayedLSN, rst.ReplayedLSN)
		}
		if n := count(ctx, t, c[name], "SELECT count(*) FROM t"); n != 5000 {
			t.Errorf("rows on %s = %d, want 5000", name, n)
		}
	}

	// Failover: stop the primary, promote db-1, point db-2 at it.
	primary.stop(t)
	if _, err := s.Status(ctx, c.pod("db-0")); !errors.Is(err, ErrUnreachable) {
		t.Errorf("status of the stopped primary: error %v, want ErrUnreachable", err)
	}
	if err := s.Promote(ctx, c.pod("db-1")); err != nil {
		t.Fatalf("promote db-1: %v", err)
	}
	promoted, err := s.Status(ctx, c.pod("db-1"))
	if err != nil {
		t.Fatalf("status of db-1 after promotion: %v", err)
	}
	if !promoted.IsPrimary() || promoted.CurrentLSN < after.CurrentLSN {
		t.Fatalf("status of db-1 after promotion = %+v, want a primary at or past %s", promoted, after.CurrentLSN)
	}
	execSQL(ctx, t, c["db-1"], `INSERT INTO t VALUES (5001, 'after promotion')`)
	if n := count(ctx, t, c["db-1"], "SELECT count(*) FROM t"); n != 5001 {
		t.Errorf("rows on the promoted server = %d, want 5001", n)
	}
	// Promoting a primary again is a no-op, so a reconciler may retry.
	if err := s.Promote(ctx, c.pod("db-1")); err != nil {
		t.Errorf("promote db-1 a second time: %v, want nil", err)
	}

	if err := s.Follow(ctx, c.pod("db-2"), c.pod("db-1")); err != nil {
		t.Fatalf("db-2 follow db-1: %v", err)
	}
	if err := s.Follow(ctx, c.pod("db-2"), c.pod("db-1")); err != nil {
		t.Errorf("db-2 follow db-1 a second time: %v, want nil", err)
	}
	newPrimary, err := s.Status(ctx, c.pod("db-1"))
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(ctx, t, s, c, "db-2", "streaming from db-1 past "+newPrimary.CurrentLSN.String(), func(st Status) bool {
		return st.InRecovery && st.ReplayedLSN >= newPrimary.CurrentLSN
	})
	var senderPort int
	if err := connectTest(ctx, t, c["db-2"]).QueryRow(ctx, "SELECT sender_port FROM pg_stat_wal_receiver").Scan(&senderPort); err != nil {
		t.Fatalf("read db-2's WAL receiver: %v", err)
	}
	if senderPort != c["db-1"].port {
		t.Errorf("db-2 streams from port %d, want db-1's %d", senderPort, c["db-1"].port)
	}
	if n := count(ctx, t, c["db-2"], "SELECT count(*) FROM t"); n != 5001 {
		t.Errorf("rows on db-2 after following db-1 = %d, want 5001", n)
	}
	// A primary cannot be demoted over SQL.
	if err := s.Follow(ctx, c.pod("db-1"), c.pod("db-2")); !errors.Is(err, ErrNeedsRestart) {
		t.Errorf("primary db-1 follow db-2: error %v, want ErrNeedsRestart", err)
	}
	if err := s.Demote(ctx, c.pod("db-1")); !errors.Is(err, ErrNeedsRestart) {
		t.Errorf("demote primary db-1: error %v, want ErrNeedsRestart", err)
	}
	if err := s.Demote(ctx, c.pod("db-2")); err != nil {
		t.Errorf("demote standby db-2: %v, want nil", err)
	}

	// The former primary's data started in recovery, as the bootstrap
	// script starts it when no primary answers: a standby that never
	// streamed (no primary_conninfo). It must be cloned, not pointed at the
	// new primary, whose timeline may have forked off behind its WAL.
	if err := os.WriteFile(filepath.Join(primary.dataDir, "standby.signal"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if primary.bins.cred != nil {
		if err := os.Chown(filepath.Join(primary.dataDir, "standby.signal"), primary.bins.uid, primary.bins.gid); err != nil {
			t.Fatal(err)
		}
	}
	primary.stopped = false
	primary.start(t)
	waitStatus(ctx, t, s, c, "db-0", "back in recovery", func(st Status) bool { return st.InRecovery })
	if err := s.Follow(ctx, c.pod("db-0"), c.pod("db-1")); !errors.Is(err, ErrNeedsRestart) {
		t.Errorf("former primary db-0, restarted as a standby with no upstream, follow db-1: error %v, want ErrNeedsRestart", err)
	}
}

// TestSQLErrors checks failures are reported, wrapped and free of secrets.
func TestSQLErrors(t *testing.T) {
	bins := findPGBinaries(t)
	work := bins.workDir(t)
	c := testCluster{"db-0": startPrimary(t, bins, work), "gone": &pgServer{port: freePort(t)}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	const wrong = "wrong-secret-123"
	tests := []struct {
		name     string
		pod      string
		password string
		wantText string
	}{
		{name: "wrong password", pod: "db-0", password: wrong, wantText: "password authentication failed"},
		{name: "nothing listening", pod: "gone", password: wrong, wantText: "connect to postgres of pod gone at 127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := c.sql(tt.password)
			pod := c.pod(tt.pod)
			for op, err := range map[string]error{
				"status":  func() error { _, err := s.Status(ctx, pod); return err }(),
				"promote": s.Promote(ctx, pod),
				"follow":  s.Follow(ctx, pod, c.pod("db-0")),
			} {
				if !errors.Is(err, ErrUnreachable) {
					t.Errorf("%s: error %v, want ErrUnreachable", op, err)
					continue
				}
				if !strings.Contains(err.Error(), tt.wantText) {
					t.Errorf("%s: error %q, want it to contain %q", op, err, tt.wantText)
				}
				if strings.Contains(err.Error(), tt.password) {
					t.Errorf("%s: error %q contains the password", op, err)
				}
			}
		})
	}
	if _, err := NewSQL(SQLOptions{}).Status(ctx, &corev1.Pod{}); err == nil {
		t.Error("status of a pod without an IP: nil error, want one")
	}
}

func TestConninfoValue(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", `'plain'`},
		{"it's", `'it\'s'`},
		{`back\slash`, `'back\\slash'`},
		{"with space", `'with space'`},
	}
	for _, tt := range tests {
		if got := conninfoValue(tt.in); got != tt.want {
			t.Errorf("conninfoValue(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got, want := quoteLiteral("it's"), `'it''s'`; got != want {
		t.Errorf("quoteLiteral = %s, want %s", got, want)
	}
}

func waitStatus(ctx context.Context, t *testing.T, s *SQL, c testCluster, name, what string, ok func(Status) bool) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var (
		last Status
		err  error
	)
	for {
		last, err = s.Status(ctx, c.pod(name))
		if err == nil && ok(last) {
			return last
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never %s: last status %+v, error %v\nserver log:\n%s", name, what, last, err, c[name].log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func connectTest(ctx context.Context, t *testing.T, s *pgServer) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=postgres", s.port, testPGUser, testPGPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func execSQL(ctx context.Context, t *testing.T, s *pgServer, stmts ...string) {
	t.Helper()
	conn := connectTest(ctx, t, s)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s on %s: %v", q, s, err)
		}
	}
}

func count(ctx context.Context, t *testing.T, s *pgServer, q string) int {
	t.Helper()
	var n int
	if err := connectTest(ctx, t, s).QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatalf("%s on %s: %v", q, s, err)
	}
	return n
}
