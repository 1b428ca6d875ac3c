package instance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	corev1 "k8s.io/api/core/v1"
)

// SQLOptions say how the SQL implementation reaches the PostgreSQL server of
// an instance pod.
type SQLOptions struct {
	// Credentials returns the user and password for the pod's server, read
	// from its cluster's Secret. The password is never logged nor put in an
	// error.
	Credentials func(ctx context.Context, pod *corev1.Pod) (user, password string, err error)
	// Address returns the host and port to dial for pod; by default the
	// pod's IP and port 5432.
	Address func(pod *corev1.Pod) (host string, port int, err error)
	// Database to connect to; "postgres" when empty.
	Database string
	// ConnectTimeout bounds the dial and authentication; 5 s when zero.
	ConnectTimeout time.Duration
	// PromoteTimeout is how long pg_promote waits for the promotion to
	// finish; 60 s when zero.
	PromoteTimeout time.Duration
}

// SQL controls real PostgreSQL servers over the wire protocol: it reads a
// server's role and WAL positions, promotes a standby and points a standby
// at a new primary.
type SQL struct {
	opts SQLOptions
}

var _ Instance = (*SQL)(nil)

// ErrNeedsRestart is returned (wrapped) by Follow when the server cannot be
// made a replica over SQL: a running primary cannot be demoted, and a server
// without data must be cloned before it starts. The pod must be restarted
// so that its start-up sets it up as a replica.
var ErrNeedsRestart = errors.New("server must restart to follow")

// NewSQL returns an SQL controller that connects with opts.
func NewSQL(opts SQLOptions) *SQL {
	if opts.Database == "" {
		opts.Database = "postgres"
	}
	if opts.Address == nil {
		opts.Address = podAddress
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 5 * time.Second
	}
	if opts.PromoteTimeout == 0 {
		opts.PromoteTimeout = 60 * time.Second
	}
	return &SQL{opts: opts}
}

func podAddress(pod *corev1.Pod) (string, int, error) {
	if pod.Status.PodIP == "" {
		return "", 0, fmt.Errorf("pod %s/%s has no IP yet: %w", pod.Namespace, pod.Name, ErrUnreachable)
	}
	return pod.Status.PodIP, 5432, nil
}

// Mode reports "sql".
func (s *SQL) Mode() string { return ModeSQL }

// Status reports the role and WAL positions of the pod's server. A server
// that answers has a data directory, so it is Initialized.
func (s *SQL) Status(ctx context.Context, pod *corev1.Pod) (Status, error) {
	st, err := s.state(ctx, pod)
	if err != nil {
		return Status{}, err
	}
	return Status{
		Initialized: true,
		InRecovery:  st.inRecovery,
		CurrentLSN:  st.current,
		ReceivedLSN: st.received,
		ReplayedLSN: st.replayed,
		NoUpstream:  st.inRecovery && st.conninfo == "",
	}, nil
}

// Promote turns the pod's standby into a primary; see promote.
func (s *SQL) Promote(ctx context.Context, pod *corev1.Pod) error {
	return s.promote(ctx, pod)
}

// sqlState is what one round trip to a server reports.
type sqlState struct {
	inRecovery bool
	// current is pg_current_wal_lsn() on a primary, 0 on a standby.
	current LSN
	// received and replayed are pg_last_wal_receive_lsn() and
	// pg_last_wal_replay_lsn() on a standby, 0 on a primary.
	received LSN
	replayed LSN
	// conninfo is primary_conninfo: where a standby streams from.
	conninfo string
}

// stateQuery reads the role, the WAL positions and where a standby
// streams from in one statement.
// pg_current_wal_lsn() raises an error during recovery, hence the CASE.
const stateQuery = `SELECT pg_is_in_recovery(),
	CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_lsn()::text END,
	pg_last_wal_receive_lsn()::text,
	pg_last_wal_replay_lsn()::text,
	current_setting('primary_conninfo')`

// conn is a connection to one pod's server.
type conn struct {
	*pgx.Conn
	addr string // host:port, for errors
}

// connect opens a connection to the pod's server.
func (s *SQL) connect(ctx context.Context, pod *corev1.Pod) (*conn, error) {
	host, port, err := s.opts.Address(pod)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	user, password, err := s.credentials(ctx, pod)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("postgres config: %w", err)
	}
	cfg.Host = host
	cfg.Port = uint16(port)
	cfg.User = user
	cfg.Password = password
	cfg.Database = s.opts.Database
	cfg.ConnectTimeout = s.opts.ConnectTimeout
	cfg.TLSConfig = nil
	cfg.Fallbacks = nil
	cfg.RuntimeParams["application_name"] = "pg-operator"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres of pod %s at %s: %w: %w", pod.Name, addr, ErrUnreachable, redact(err, password))
	}
	return &conn{Conn: c, addr: addr}, nil
}

func (s *SQL) credentials(ctx context.Context, pod *corev1.Pod) (string, string, error) {
	if s.opts.Credentials == nil {
		return "", "", errors.New("sql instance control has no credentials source")
	}
	user, password, err := s.opts.Credentials(ctx, pod)
	if err != nil {
		return "", "", fmt.Errorf("credentials for pod %s: %w", pod.Name, err)
	}
	return user, password, nil
}

func (c *conn) close(ctx context.Context) { _ = c.Close(context.WithoutCancel(ctx)) }

// state reads the role and WAL positions of the pod's server.
func (s *SQL) state(ctx context.Context, pod *corev1.Pod) (sqlState, error) {
	c, err := s.connect(ctx, pod)
	if err != nil {
		return sqlState{}, err
	}
	defer c.close(ctx)
	var (
		st                          sqlState
		current, received, replayed *string
	)
	if err := c.QueryRow(ctx, stateQuery).Scan(&st.inRecovery, &current, &received, &replayed, &st.conninfo); err != nil {
		return sqlState{}, fmt.Errorf("read state of postgres at %s: %w", c.addr, err)
	}
	for _, f := range []struct {
		text *string
		lsn  *LSN
	}{{current, &st.current}, {received, &st.received}, {replayed, &st.replayed}} {
		if f.text == nil {
			continue
		}
		l, err := ParseLSN(*f.text)
		if err != nil {
			return sqlState{}, fmt.Errorf("read state of postgres at %s: %w", c.addr, err)
		}
		*f.lsn = l
	}
	return st, nil
}

// promote turns the standby of pod into a primary and waits until it accepts
// writes. Promoting a server that is already a primary does nothing, so a
// reconciler may retry it.
func (s *SQL) promote(ctx context.Context, pod *corev1.Pod) error {
	c, err := s.connect(ctx, pod)
	if err != nil {
		return err
	}
	defer c.close(ctx)
	var inRecovery bool
	if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil {
		return fmt.Errorf("promote postgres at %s: %w", c.addr, err)
	}
	if !inRecovery {
		return nil
	}
	wait := max(int(s.opts.PromoteTimeout/time.Second), 1)
	var done bool
	if err := c.QueryRow(ctx, "SELECT pg_promote(true, $1)", wait).Scan(&done); err != nil {
		return fmt.Errorf("promote postgres at %s: %w", c.addr, err)
	}
	if !done {
		return fmt.Errorf("promote postgres at %s: not promoted within %d s", c.addr, wait)
	}
	return nil
}

// Follow points the standby of pod at primary: it rewrites primary_conninfo
// with ALTER SYSTEM and reloads the configuration, which restarts the WAL
// receiver (PostgreSQL 13 and later). A standby whose primary_conninfo already
// names the primary's address is left alone. A running primary cannot be
// demoted over SQL, and a standby with no primary_conninfo at all holds a
// former primary's data: for both, Follow returns an error wrapping
// ErrNeedsRestart.
func (s *SQL) Follow(ctx context.Context, pod, primary *corev1.Pod) error {
	c, err := s.connect(ctx, pod)
	if err != nil {
		return err
	}
	defer c.close(ctx)
	var (
		inRecovery bool
		conninfo   string
	)
	if err := c.QueryRow(ctx, `SELECT pg_is_in_recovery(), current_setting('primary_conninfo')`).
		Scan(&inRecovery, &conninfo); err != nil {
		return fmt.Errorf("follow %s with postgres at %s: %w", primary.Name, c.addr, err)
	}
	if !inRecovery {
		return fmt.Errorf("follow %s with postgres at %s: it runs as a primary: %w", primary.Name, c.addr, ErrNeedsRestart)
	}
	if conninfo == "" {
		// A standby that never streamed: a former primary's data, started
		// in recovery by the bootstrap script because no primary answered.
		// Its WAL may have gone past the point where the new primary's
		// timeline forked off, so it is cloned afresh instead.
		return fmt.Errorf("follow %s with postgres at %s: it is a former primary's data with no upstream: %w", primary.Name, c.addr, ErrNeedsRestart)
	}
	host, port, err := s.opts.Address(primary)
	if err != nil {
		return fmt.Errorf("follow %s: %w", primary.Name, err)
	}
	if h, p, ok := conninfoTarget(conninfo); ok && h == host && p == port {
		return nil
	}
	user, password, err := s.credentials(ctx, primary)
	if err != nil {
		return err
	}
	conninfo = fmt.Sprintf("host=%s port=%d user=%s password=%s application_name=%s",
		conninfoValue(host), port, conninfoValue(user), conninfoValue(password), conninfoValue(pod.Name))
	for _, q := range []string{
		"ALTER SYSTEM SET primary_conninfo = " + quoteLiteral(conninfo),
		"SELECT pg_reload_conf()",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("follow %s with postgres at %s: %w", primary.Name, c.addr, redact(err, password))
		}
	}
	return nil
}

// Demote cannot stop a real primary over SQL (PostgreSQL has no function
// for it): for a server that runs as a primary it returns an error
// wrapping ErrNeedsRestart, so that the caller stops its pod. A standby
// is left alone.
func (s *SQL) Demote(ctx context.Context, pod *corev1.Pod) error {
	st, err := s.state(ctx, pod)
	if err != nil {
		return err
	}
	if st.inRecovery {
		return nil
	}
	return fmt.Errorf("demote postgres of pod %s: it runs as a primary and SQL cannot demote it: %w", pod.Name, ErrNeedsRestart)
}

// conninfoTarget returns the host and port a libpq connection string names.
func conninfoTarget(conninfo string) (string, int, bool) {
	if conninfo == "" {
		return "", 0, false
	}
	cfg, err := pgconn.ParseConfig(conninfo)
	if err != nil {
		return "", 0, false
	}
	return cfg.Host, int(cfg.Port), true
}

// conninfoValue quotes a libpq connection-string value.
func conninfoValue(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// quoteLiteral quotes an SQL string literal (standard_conforming_strings is
// on, the default since PostgreSQL 9.1).
func quoteLiteral(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// redact removes the password from an error's text: some drivers echo a
// connection string back.
func redact(err error, password string) error {
	if password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, "xxxxx"))
}

// LSN is a position in PostgreSQL's write-ahead log, printed as "X/Y" (two
// hexadecimal halves of a 64-bit number).
type LSN uint64

// ParseLSN parses PostgreSQL's text form of a pg_lsn, such as "0/3000148".
func ParseLSN(s string) (LSN, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("parse lsn %q: want X/Y", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("parse lsn %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("parse lsn %q: %w", s, err)
	}
	return LSN(h<<32 | l), nil
}

// String prints l as PostgreSQL does.
func (l LSN) String() string {
	return fmt.Sprintf("%X/%X", uint64(l)>>32, uint64(l)&0xFFFFFFFF)
}
