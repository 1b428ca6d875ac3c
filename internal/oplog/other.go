package oplog

import "strings"

// Other operators name the custom resource a line is about in keys of
// their own. Both below log with logrus, whose text lines
// (time="…" level=info msg="…" key=value…) and JSON lines parseLogfmt and
// parseJSON read already; only the object needs knowing their keys.
//
//   - Zalando's postgres-operator: cluster-name=<namespace>/<name> on every
//     line about a postgresql resource (pkg/cluster/cluster.go,
//     pkg/controller/postgresql.go: WithField("cluster-name", …)).
//   - Spotahome's redis-operator: namespace=<namespace>
//     redisfailover=<name> (operator/redisfailover/*.go); its controller
//     library, kooper, names the object only in the message of a failed
//     pass: "Error processing <namespace>/<name>: <error>".
const (
	keyZalandoCluster = "cluster-name"
	keySpotahomeRF    = "redisfailover"
	kooperFailed      = "Error processing "
)

// otherObject returns the object a line of another operator is about, and
// the keys that named it; "" when the line names none.
func otherObject(kv map[string]string) (string, []string) {
	if c := kv[keyZalandoCluster]; c != "" {
		return c, []string{keyZalandoCluster}
	}
	if n := kv[keySpotahomeRF]; n != "" {
		if ns := kv["namespace"]; ns != "" {
			return ns + "/" + n, []string{keySpotahomeRF, "namespace"}
		}
		return n, []string{keySpotahomeRF}
	}
	if _, kooper := kv["operator"]; kooper {
		for _, k := range []string{"msg", "message"} {
			if rest, ok := strings.CutPrefix(kv[k], kooperFailed); ok {
				if obj, _, ok := strings.Cut(rest, ": "); ok && strings.Count(obj, "/") == 1 && !strings.ContainsRune(obj, ' ') {
					return obj, nil
				}
			}
		}
	}
	return "", nil
}
