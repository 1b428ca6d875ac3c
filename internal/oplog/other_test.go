package oplog

import (
	"testing"
	"time"
)

// TestParseOtherOperators parses real lines of other operators' logs, each
// copied from the public report named beside it, for the labs that will
// run them: their level, the custom resource they are about and their
// message.
func TestParseOtherOperators(t *testing.T) {
	t.Parallel()
	tests := []struct {
		source string // where the line was published
		line   string
		level  string
		object string
		msg    string
	}{
		// Zalando postgres-operator: logrus text, cluster-name=<namespace>/<name>.
		{
			source: "https://github.com/zalando/postgres-operator/issues/1059",
			line:   `time="2024-05-22T09:34:49Z" level=info msg="master service \"appns/main-db\" has been successfully created" cluster-name=appns/main-db pkg=cluster worker=0`,
			level:  LevelInfo, object: "appns/main-db", msg: `master service "appns/main-db" has been successfully created`,
		},
		{
			source: "https://github.com/zalando/postgres-operator/issues/1913",
			line:   `time="2023-05-26T11:53:18Z" level=info msg="secrets have been successfully created" cluster-name=postgres/test-postgres-cluster pkg=cluster worker=0`,
			level:  LevelInfo, object: "postgres/test-postgres-cluster", msg: "secrets have been successfully created",
		},
		{
			source: "https://github.com/zalando/postgres-operator/issues/1496",
			line:   `time="2021-05-16T20:33:06Z" level=warning msg="could not connect to Postgres database: dial tcp 10.43.252.153:5432: connect: connection refused" cluster-name=affo-test-validation-staging/z-postgres pkg=cluster worker=0`,
			level:  LevelWarn, object: "affo-test-validation-staging/z-postgres", msg: "could not connect to Postgres database: dial tcp 10.43.252.153:5432: connect: connection refused",
		},
		{
			source: "https://github.com/zalando/postgres-operator/issues/893",
			line:   `time="2020-03-30T11:55:16Z" level=error msg="could not sync cluster: could not sync roles: could not init db connection: could not init db connection: still failing after 8 retries" cluster-name=monitoring/platform-grafana-postgres pkg=controller worker=1`,
			level:  LevelError, object: "monitoring/platform-grafana-postgres", msg: "could not sync cluster: could not sync roles: could not init db connection: could not init db connection: still failing after 8 retries",
		},
		{
			source: "https://github.com/zalando/postgres-operator/issues/893",
			line:   `time="2020-03-30T12:23:26Z" level=info msg="\"SYNC\" event has been queued" cluster-name=monitoring/platform-grafana-postgres pkg=controller worker=1`,
			level:  LevelInfo, object: "monitoring/platform-grafana-postgres", msg: `"SYNC" event has been queued`,
		},
		{
			source: "https://github.com/zalando/postgres-operator/issues/1608",
			line:   `time="2021-09-03T11:41:42Z" level=debug msg="new node has been added: /avalon ()" pkg=controller`,
			level:  LevelDebug, msg: "new node has been added: /avalon ()",
		},
		// Spotahome redis-operator: logrus text through its own logger
		// (log/log.go adds src=file:line), namespace= and redisfailover=.
		{
			source: "https://github.com/spotahome/redis-operator/issues/608",
			line:   `time="2023-05-29T10:17:47Z" level=warning msg="Slave not associated to master: slave 1.1.108.150 don't have the master 1.1.209.126, has 127.0.0.1" namespace=dtg-test redisfailover=redisfailover src="handler.go:79"`,
			level:  LevelWarn, object: "dtg-test/redisfailover", msg: "Slave not associated to master: slave 1.1.108.150 don't have the master 1.1.209.126, has 127.0.0.1",
		},
		{
			source: "https://github.com/spotahome/redis-operator/issues/608",
			line:   `time="2023-05-29T10:01:17Z" level=info msg="starting controller" controller-id=redisfailover operator=redisfailover service=kooper.controller src="controller.go:229"`,
			level:  LevelInfo, msg: "starting controller",
		},
		{
			source: "https://github.com/spotahome/redis-operator/issues/141",
			line:   `time="2019-04-09T15:38:46Z" level=error msg="Error processing identity-redis-dev/redis: More than one master, fix manually" controller=redisfailover operator=redisfailover src="generic.go:223"`,
			level:  LevelError, object: "identity-redis-dev/redis", msg: "Error processing identity-redis-dev/redis: More than one master, fix manually",
		},
		{
			// A line about an object the resource owns: its namespace is
			// kept as a field, and no resource is made up.
			source: "https://github.com/spotahome/redis-operator/pull/186",
			line:   `time="2019-10-11T09:08:49Z" level=info msg="configMap updated" configMap=rfs-redisfailover namespace=platform-local service=k8s.configMap src="configmap.go:76"`,
			level:  LevelInfo, msg: "configMap updated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			t.Parallel()
			e := ParseText(tt.line, time.Time{})
			if e.Level != tt.level || e.Object != tt.object || e.Message != tt.msg {
				t.Errorf("%s\ngot  level %q object %q message %q\nwant level %q object %q message %q", tt.line, e.Level, e.Object, e.Message, tt.level, tt.object, tt.msg)
			}
			if e.Time.IsZero() || e.Pass != nil {
				t.Errorf("got time %v and pass %+v, want the line's time and no pass", e.Time, e.Pass)
			}
			if tt.object != "" && (e.Fields["cluster-name"] != "" || e.Fields["redisfailover"] != "") {
				t.Errorf("got fields %v, want the keys that named the object taken out", e.Fields)
			}
			if tt.object == "" && e.Fields["src"] == "" && e.Fields["pkg"] == "" {
				t.Errorf("got fields %v, want the line's own (pkg or src) kept", e.Fields)
			}
		})
	}
}
