package oplog

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/cmd/pg-operator/app"
	"oplab.dev/oplab/internal/jsonconv"
)

// operatorLine writes one line through the operator's own logger, with the
// values its controller gives every pass (controller/log.go), so a change
// of that logger's format fails here.
func operatorLine(t *testing.T, msg string, kv ...any) string {
	t.Helper()
	var buf bytes.Buffer
	log := app.NewLogger(&buf).WithValues("controller", "postgrescluster", "controllerGroup", "databases.example.com",
		"controllerKind", "PostgresCluster", "PostgresCluster", map[string]string{"name": "prod-db", "namespace": "default"},
		"namespace", "default", "name", "prod-db", "reconcileID", "r1")
	log.Info(msg, kv...)
	return strings.TrimSpace(buf.String())
}

func TestPassOfOperatorLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  string
		kv   []any
		want *Pass
	}{
		{
			name: "bootstrap: the loop of the issue's example",
			msg:  "changed the cluster",
			kv: []any{"read", "pods: prod-db-0 primary@0/300A9AA, prod-db-1 empty, prod-db-2 empty not-ready", "primary", "prod-db-0", "instances", "simulated",
				"differs", "no primary yet",
				"did", "targetPrimary → prod-db-0; promoted prod-db-0; wrote status (phase Bootstrapping); currentPrimary \"\" → prod-db-0; labelled prod-db-0 role none → primary",
				"took", "181ms", "next", "2s"},
			want: &Pass{
				Watch:   []string{"pods: prod-db-0 primary@0/300A9AA, prod-db-1 empty, prod-db-2 empty not-ready"},
				Diff:    []string{"no primary yet"},
				Act:     []string{"targetPrimary → prod-db-0", "promoted prod-db-0", `currentPrimary "" → prod-db-0`, "labelled prod-db-0 role none → primary"},
				Kinds:   []string{"currentPrimary", "labelled", "promoted", "targetPrimary"},
				Status:  "phase Bootstrapping",
				Primary: "prod-db-0", Took: jsonconv.Duration(181 * time.Millisecond), Next: jsonconv.Duration(2 * time.Second),
			},
		},
		{
			name: "failover: the old primary fenced, a replica elected",
			msg:  "changed the cluster",
			kv: []any{"read", "pods: prod-db-0 terminating, prod-db-1 replica@0/3000060, prod-db-2 replica@0/3000060", "primary", "prod-db-0", "instances", "simulated",
				"differs", "primary pod prod-db-0 is being deleted",
				"did", "labelled prod-db-0 role primary → unhealthy; targetPrimary → prod-db-1; elected prod-db-1: the ready replica furthest ahead (WAL 0/3000060); wrote status (phase FailingOver)",
				"took", "3.412ms", "next", "200ms"},
			want: &Pass{
				Watch:   []string{"pods: prod-db-0 terminating, prod-db-1 replica@0/3000060, prod-db-2 replica@0/3000060"},
				Diff:    []string{"primary pod prod-db-0 is being deleted"},
				Act:     []string{"labelled prod-db-0 role primary → unhealthy", "targetPrimary → prod-db-1", "elected prod-db-1: the ready replica furthest ahead (WAL 0/3000060)"},
				Kinds:   []string{"elected", "fenced", "labelled", "targetPrimary"},
				Status:  "phase FailingOver",
				Primary: "prod-db-0", Took: jsonconv.Duration(3412 * time.Microsecond), Next: jsonconv.Duration(200 * time.Millisecond),
			},
		},
		{
			name: "in sync: idle, no next",
			msg:  "in sync, nothing to do",
			kv:   []any{"read", "pods: prod-db-0 primary@0/3000100, prod-db-1 replica@0/3000100", "primary", "prod-db-0", "instances", "simulated", "took", "412µs"},
			want: &Pass{Watch: []string{"pods: prod-db-0 primary@0/3000100, prod-db-1 replica@0/3000100"}, Primary: "prod-db-0", Took: jsonconv.Duration(412 * time.Microsecond), Idle: true},
		},
		{
			name: "waiting for the failover delay; parts that go on stay together",
			msg:  "changed the cluster",
			kv: []any{"read", "pods: prod-db-0 primary@0/3000100 not-ready; StatefulSet prod-db: FailedCreate: pods \"prod-db-2\" is forbidden: exceeded quota: q", "primary", "prod-db-0", "instances", "simulated",
				"differs", "primary pod prod-db-0 is not ready",
				"did", "waiting 3.2s more (failoverDelay 4s) before failing over; no ready replica can take over; waiting; stopped: Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again; will read again",
				"took", "1.5ms", "next", "3.2s"},
			want: &Pass{
				Watch: []string{"pods: prod-db-0 primary@0/3000100 not-ready", `StatefulSet prod-db: FailedCreate: pods "prod-db-2" is forbidden: exceeded quota: q`},
				Diff:  []string{"primary pod prod-db-0 is not ready"},
				Act: []string{"waiting 3.2s more (failoverDelay 4s) before failing over", "no ready replica can take over; waiting",
					"stopped: Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again; will read again"},
				Kinds:   []string{"conflict", "waiting"},
				Primary: "prod-db-0", Took: jsonconv.Duration(1500 * time.Microsecond), Next: jsonconv.Duration(3200 * time.Millisecond),
			},
		},
		{
			name: "objects, rejoin and a status write alone is not idle",
			msg:  "changed the cluster",
			kv: []any{"read", "pods: prod-db-0 replica@0/3000100, prod-db-1 primary@0/3000100", "primary", "prod-db-1", "instances", "simulated",
				"differs", "StatefulSet prod-db: [replicas] differ; Secret prod-db-credentials missing",
				"did", "updated StatefulSet prod-db; created Secret prod-db-credentials with a generated password; prod-db-0 now follows prod-db-1; restarted prod-db-2: it must be cloned to follow prod-db-1; demoted prod-db-3; prod-db-4 is gone; removed annotation x",
				"took", "2ms"},
			want: &Pass{
				Watch: []string{"pods: prod-db-0 replica@0/3000100, prod-db-1 primary@0/3000100"},
				Diff:  []string{"StatefulSet prod-db: [replicas] differ", "Secret prod-db-credentials missing"},
				Act: []string{"updated StatefulSet prod-db", "created Secret prod-db-credentials with a generated password", "prod-db-0 now follows prod-db-1",
					"restarted prod-db-2: it must be cloned to follow prod-db-1", "demoted prod-db-3", "prod-db-4 is gone", "removed annotation x"},
				Kinds:   []string{"created", "demoted", "follows", "gone", "removed", "restarted", "updated"},
				Primary: "prod-db-1", Took: jsonconv.Duration(2 * time.Millisecond),
			},
		},
		{
			name: "only the status written",
			msg:  "changed the cluster",
			kv:   []any{"read", "pods: prod-db-0 primary@0/3000100", "primary", "prod-db-0", "instances", "simulated", "did", "wrote status (phase Running)", "took", "900µs"},
			want: &Pass{Watch: []string{"pods: prod-db-0 primary@0/3000100"}, Status: "phase Running", Primary: "prod-db-0", Took: jsonconv.Duration(900 * time.Microsecond)},
		},
		{
			name: "not a pass: no took",
			msg:  "Starting workers",
			kv:   []any{"worker count", 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line := operatorLine(t, tt.msg, tt.kv...)
			e := ParseText(line, time.Time{})
			if !reflect.DeepEqual(e.Pass, tt.want) {
				t.Errorf("line %s\ngot  %+v\nwant %+v", line, e.Pass, tt.want)
			}
			if e.Object != "default/prod-db" || e.Message != tt.msg {
				t.Errorf("got object %q message %q, want default/prod-db %q", e.Object, e.Message, tt.msg)
			}
			if tt.want == nil {
				return
			}
			// Each fact once: the pass's fields are not left in Fields.
			for _, k := range []string{"read", "differs", "did", "primary", "took", "next"} {
				if v, ok := e.Fields[k]; ok {
					t.Errorf("Fields still has %s=%q, want it only in the pass", k, v)
				}
			}
			if e.Fields["instances"] != "simulated" || e.Fields["controller"] != "postgrescluster" {
				t.Errorf("got fields %v, want the others kept (instances, controller)", e.Fields)
			}
		})
	}
}

func TestPassJSON(t *testing.T) {
	t.Parallel()
	line := operatorLine(t, "changed the cluster", "read", "pods: prod-db-1 replica@0/3000060", "primary", "prod-db-0",
		"differs", "primary pod prod-db-0 does not exist", "did", "promoted prod-db-1; wrote status (phase Running)", "took", "1.6ms", "next", "2s")
	e := ParseText(line, time.Time{})
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Pass   map[string]any    `json:"pass"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"watch": []any{"pods: prod-db-1 replica@0/3000060"}, "diff": []any{"primary pod prod-db-0 does not exist"},
		"act": []any{"promoted prod-db-1"}, "kinds": []any{"promoted"}, "status": "phase Running", "primary": "prod-db-0",
		"tookMs": float64(2), "nextMs": float64(2000), "idle": false,
	}
	if !reflect.DeepEqual(got.Pass, want) {
		t.Errorf("pass JSON:\ngot  %v\nwant %v", got.Pass, want)
	}
	if _, ok := got.Fields["took"]; ok {
		t.Errorf("fields JSON has took: %v", got.Fields)
	}
	var back Entry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Pass == nil || back.Pass.Next.Duration() != 2*time.Second || back.Pass.Took.Duration() != 2*time.Millisecond || !reflect.DeepEqual(back.Pass.Act, e.Pass.Act) {
		t.Errorf("read back: got %+v, want the pass in whole milliseconds", back.Pass)
	}
	idle := ParseText(operatorLine(t, "in sync, nothing to do", "read", "pods: prod-db-0 primary@0/1", "took", "300µs"), time.Time{})
	b, _ = json.Marshal(idle.Pass)
	if got, want := string(b), `{"watch":["pods: prod-db-0 primary@0/1"],"tookMs":0,"idle":true}`; got != want {
		t.Errorf("idle pass JSON: got %s, want %s", got, want)
	}
}

// TestEntryJSONConvention holds the Entry the page receives to the JSON
// convention of every browser API (docs/api.md).
func TestEntryJSONConvention(t *testing.T) {
	t.Parallel()
	for _, err := range jsonconv.Check(Entry{}) {
		t.Error(err)
	}
}

// BenchmarkParsePass is what a reconcile pass's line costs to parse, its
// Pass included, and to encode for the page: once per line, whatever the
// number of viewers.
func BenchmarkParsePass(b *testing.B) {
	line := `time=2026-12-02T07:39:31.849Z level=INFO msg="changed the cluster" controller=postgrescluster namespace=default name=prod-db ` +
		`reconcileID=655e57ac-baf7-475b-9d28-a5c6b392a433 read="pods: prod-db-0 empty, prod-db-1 replica@0/31A6FD6, prod-db-2 replica@0/31A2828" ` +
		`primary=prod-db-0 instances=simulated differs="primary pod prod-db-0 was recreated without its data" ` +
		`did="labelled prod-db-0 role none → unhealthy; targetPrimary → prod-db-1; elected prod-db-1: the ready replica furthest ahead (WAL 0/31A6FD6); ` +
		`promoted prod-db-1; currentPrimary \"prod-db-0\" → prod-db-1; labelled prod-db-1 role replica → primary; wrote status (phase Healthy)" took=774.2ms next=30s`
	b.ReportAllocs()
	for b.Loop() {
		e := ParseText(line, time.Time{})
		if e.Pass == nil {
			b.Fatal("no pass")
		}
		if _, err := json.Marshal(e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/line")
}
