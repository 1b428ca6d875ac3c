package oplog

import (
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

func TestEntryText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 13, 17, 2, 345e6, time.UTC)
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{
			name: "a pass that acted: its loop, one act a line",
			e: Entry{Time: at, Level: LevelInfo, Object: "default/prod-db", Message: "changed the cluster", Raw: "raw",
				Pass: &Pass{Watch: []string{"pods: prod-db-0 terminating, prod-db-1 replica@0/3000060"}, Diff: []string{"primary pod prod-db-0 is being deleted"},
					Act:    []string{"labelled prod-db-0 role primary → unhealthy", "targetPrimary → prod-db-1"},
					Status: "phase FailingOver", Primary: "prod-db-0", Took: jsonconv.Duration(3412 * time.Microsecond), Next: jsonconv.Duration(200 * time.Millisecond)}},
			want: "13:17:02.345 default/prod-db changed the cluster (took 3.4ms, next in 200ms)\n" +
				"  watch  pods: prod-db-0 terminating, prod-db-1 replica@0/3000060\n" +
				"  diff   primary pod prod-db-0 is being deleted\n" +
				"  act    labelled prod-db-0 role primary → unhealthy\n" +
				"         targetPrimary → prod-db-1\n" +
				"  status wrote phase FailingOver, primary prod-db-0",
		},
		{
			name: "a waiting pass: nothing written",
			e: Entry{Time: at, Level: LevelInfo, Object: "default/prod-db", Message: "waiting",
				Pass: &Pass{Watch: []string{"pods: prod-db-0 empty not-ready"}, Diff: []string{"no primary yet; waiting for pod prod-db-0 to be ready"}, Took: jsonconv.Duration(2 * time.Second), Next: jsonconv.Duration(time.Second)}},
			want: "13:17:02.345 default/prod-db waiting (took 2s, next in 1s)\n" +
				"  watch  pods: prod-db-0 empty not-ready\n" +
				"  diff   no primary yet; waiting for pod prod-db-0 to be ready",
		},
		{
			name: "an idle pass: one line",
			e: Entry{Time: at, Level: LevelInfo, Object: "default/prod-db", Message: "in sync, nothing to do",
				Pass: &Pass{Watch: []string{"pods: prod-db-0 primary@0/1"}, Primary: "prod-db-0", Took: jsonconv.Duration(412 * time.Microsecond), Idle: true}},
			want: "13:17:02.345 default/prod-db in sync, nothing to do (took 412µs)",
		},
		{
			name: "a pass at another level, with an error",
			e: Entry{Time: at, Level: LevelWarn, Object: "default/prod-db", Message: "reconcile failed; will retry with backoff", Error: "forbidden",
				Pass: &Pass{Watch: []string{"pods: none"}, Primary: "prod-db-0", Took: jsonconv.Duration(1500 * time.Microsecond)}},
			want: "13:17:02.345 WARN default/prod-db reconcile failed; will retry with backoff (took 1.5ms): forbidden\n" +
				"  watch  pods: none\n" +
				"  status unchanged, primary prod-db-0",
		},
		{
			name: "not a pass: as written",
			e:    Entry{Time: at, Level: LevelError, Message: "Reconciler error", Raw: `time=2026-03-04T13:17:02Z level=ERROR msg="Reconciler error"`},
			want: `time=2026-03-04T13:17:02Z level=ERROR msg="Reconciler error"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.e.Text(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
