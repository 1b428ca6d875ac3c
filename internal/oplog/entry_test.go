package oplog

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/cmd/pg-operator/app"
	"oplab.dev/oplab/internal/jsonconv"
)

func TestParseText(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	around := at("2026-11-30T00:00:00Z")
	tests := []struct {
		name string
		text string
		want Entry
	}{
		{
			name: "slog text, the operator's own",
			text: `time=2026-11-30T22:50:57.123Z level=INFO msg="changed the cluster" controller=postgrescluster namespace=team name=db read="sts db 3/3" did="created pod db-2" took=1.2ms`,
			want: Entry{Time: at("2026-11-30T22:50:57.123Z"), Level: LevelInfo, Object: "team/db", Message: "changed the cluster",
				Fields: map[string]string{"controller": "postgrescluster"},
				Pass:   &Pass{Watch: []string{"sts db 3/3"}, Act: []string{"created pod db-2"}, Kinds: []string{"created"}, Took: jsonconv.Duration(1200 * time.Microsecond)}},
		},
		{
			name: "slog text error with quotes inside",
			text: `time=2026-11-30T22:50:58Z level=ERROR msg="Reconciler error" namespace=team name=db error="pods \"db-0\" is forbidden: User cannot patch"`,
			want: Entry{Time: at("2026-11-30T22:50:58Z"), Level: LevelError, Object: "team/db", Message: "Reconciler error",
				Error: `pods "db-0" is forbidden: User cannot patch`},
		},
		{
			name: "slog text with an object group",
			text: `level=DEBUG-4 msg=x PostgresCluster.name=db PostgresCluster.namespace=team`,
			want: Entry{Level: LevelDebug, Object: "team/db", Message: "x",
				Fields: map[string]string{"PostgresCluster.name": "db", "PostgresCluster.namespace": "team"}},
		},
		{
			name: "slog JSON",
			text: `{"time":"2026-11-30T22:50:59Z","level":"WARN","msg":"slow","namespace":"team","name":"db","took":12.5}`,
			want: Entry{Time: at("2026-11-30T22:50:59Z"), Level: LevelWarn, Object: "team/db", Message: "slow", Fields: map[string]string{"took": "12.5"}},
		},
		{
			name: "zap JSON with epoch time and an object",
			text: `{"level":"error","ts":1764543059.5,"logger":"controller","msg":"Reconciler error","PostgresCluster":{"name":"db","namespace":"team"},"error":"exceeded quota"}`,
			want: Entry{Time: time.Unix(1764543059, 5e8).UTC(), Level: LevelError, Object: "team/db", Message: "Reconciler error", Error: "exceeded quota",
				Fields: map[string]string{"logger": "controller", "PostgresCluster": `{"name":"db","namespace":"team"}`}},
		},
		{
			name: "zap JSON with a V-level",
			text: `{"level":"Level(-2)","msg":"deep"}`,
			want: Entry{Level: LevelDebug, Message: "deep"},
		},
		{
			name: "zap console",
			text: "2026-11-30T22:51:00.000Z\tINFO\tcontroller-runtime.metrics\tStarting metrics server\t{\"bindAddress\": \":8080\"}",
			want: Entry{Time: at("2026-11-30T22:51:00Z"), Level: LevelInfo, Message: "Starting metrics server",
				Fields: map[string]string{"logger": "controller-runtime.metrics", "bindAddress": ":8080"}},
		},
		{
			name: "klog structured",
			text: `E1130 22:51:01.000002   12345 reflector.go:158] "Unhandled Error" err="failed to list *v1.Pod: forbidden" logger="UnhandledError"`,
			want: Entry{Time: time.Date(2026, 11, 30, 22, 51, 1, 2000, time.Local), Level: LevelError, Message: "Unhandled Error", Error: "failed to list *v1.Pod: forbidden",
				Fields: map[string]string{"source": "reflector.go:158", "logger": "UnhandledError"}},
		},
		{
			name: "klog plain",
			text: `W1130 22:51:02.000000       7 warnings.go:70] metadata.finalizers: "x": prefer a domain-qualified finalizer`,
			want: Entry{Time: time.Date(2026, 11, 30, 22, 51, 2, 0, time.Local), Level: LevelWarn, Message: `metadata.finalizers: "x": prefer a domain-qualified finalizer`,
				Fields: map[string]string{"source": "warnings.go:70"}},
		},
		{name: "plain text", text: "panic: runtime error: index out of range", want: Entry{Message: "panic: runtime error: index out of range"}},
		{name: "broken JSON", text: `{"level":"info","msg":`, want: Entry{Message: `{"level":"info","msg":`}},
		{name: "JSON that is not an object", text: `["a"]`, want: Entry{Message: `["a"]`}},
		{name: "key=value without msg", text: "a=b c=d", want: Entry{Message: "a=b c=d"}},
		{name: "msg without level or time", text: "msg=hello x=1", want: Entry{Message: "msg=hello x=1"}},
		{name: "unterminated quote", text: `level=INFO msg="oops`, want: Entry{Message: `level=INFO msg="oops`}},
		{name: "tabs but no zap line", text: "a\tb\tc", want: Entry{Message: "a\tb\tc"}},
		{name: "looks like klog but is not", text: "I1130 is not a klog header at all, no", want: Entry{Message: "I1130 is not a klog header at all, no"}},
		{name: "empty", text: "", want: Entry{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseText(tt.text, around)
			tt.want.Raw = tt.text
			if !got.Time.Equal(tt.want.Time) {
				t.Errorf("time: got %v, want %v", got.Time, tt.want.Time)
			}
			got.Time, tt.want.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestParseOperatorLogger parses what the operator's own logger writes, so
// that a change of the operator's format cannot go unnoticed here.
func TestParseOperatorLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := app.NewLogger(&buf).WithValues("controller", "postgrescluster", "controllerGroup", "databases.example.com",
		"controllerKind", "PostgresCluster", "PostgresCluster", map[string]string{"name": "db", "namespace": "team"},
		"namespace", "team", "name", "db", "reconcileID", "r1")
	log.Info("changed the cluster", "did", "created pod db-1; relabelled db-0", "took", "3ms")
	log.Error(errors.New(`pods "db-1" is forbidden: cannot create`), "Reconciler error")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines from the operator's logger, want 2:\n%s", len(lines), buf.String())
	}
	tests := []struct {
		level, msg, err string
		did             []string
	}{
		{LevelInfo, "changed the cluster", "", []string{"created pod db-1", "relabelled db-0"}},
		{LevelError, "Reconciler error", `pods "db-1" is forbidden: cannot create`, nil},
	}
	for i, tt := range tests {
		e := ParseText(lines[i], time.Time{})
		var did []string
		if e.Pass != nil {
			did = e.Pass.Act
		}
		if e.Level != tt.level || e.Message != tt.msg || e.Error != tt.err || e.Object != "team/db" || !reflect.DeepEqual(did, tt.did) || e.Time.IsZero() {
			t.Errorf("line %q: got level %q message %q error %q object %q did %q time %v; want %q %q %q team/db %q and a time",
				lines[i], e.Level, e.Message, e.Error, e.Object, did, e.Time, tt.level, tt.msg, tt.err, tt.did)
		}
	}
}

func TestParseEntryTakesCRITime(t *testing.T) {
	t.Parallel()
	cri := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := ParseEntry(Line{Time: cri, Stream: "stderr", Text: "plain"}); !got.Time.Equal(cri) || got.Stream != "stderr" {
		t.Errorf("plain line: got time %v stream %q, want %v stderr", got.Time, got.Stream, cri)
	}
	own := "time=2026-01-02T03:04:06Z level=INFO msg=x"
	if got := ParseEntry(Line{Time: cri, Text: own}); !got.Time.Equal(cri.Add(time.Second)) {
		t.Errorf("line with its own time: got %v, want %v", got.Time, cri.Add(time.Second))
	}
}
