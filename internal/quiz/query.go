package quiz

import (
	"context"
	"sort"
)

// Query says where in the learner's cluster the answer to a cluster question
// is found. A later engine evaluates it against the cluster.
type Query struct {
	Query     string `yaml:"query" json:"query"`
	Cluster   string `yaml:"cluster" json:"cluster"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Condition names the status condition for the conditionStatus and
	// conditionReason queries.
	Condition string `yaml:"condition,omitempty" json:"condition,omitempty"`
}

// QueryKind describes a query the engine must implement.
type QueryKind struct {
	Name string
	// Numeric answers are compared as integers; others as names, ignoring
	// case and surrounding space.
	Numeric bool
	// NeedsCondition is true when Query.Condition must be set.
	NeedsCondition bool
	Doc            string
}

var queryKinds = map[string]QueryKind{
	"currentPrimary":     {Doc: "pod name in status.currentPrimary of the PostgresCluster"},
	"targetPrimary":      {Doc: "pod name in status.targetPrimary of the PostgresCluster"},
	"rwEndpoint":         {Doc: "name of the pod behind the <cluster>-rw Service's endpoints"},
	"readyReplicas":      {Numeric: true, Doc: "status.readyReplicas of the PostgresCluster"},
	"specReplicas":       {Numeric: true, Doc: "spec.replicas of the PostgresCluster"},
	"podCount":           {Numeric: true, Doc: "number of pods of the cluster's StatefulSet that exist"},
	"observedGeneration": {Numeric: true, Doc: "status.observedGeneration of the PostgresCluster"},
	"conditionStatus":    {NeedsCondition: true, Doc: "status (True, False, Unknown) of a condition"},
	"conditionReason":    {NeedsCondition: true, Doc: "reason of a condition"},
	"storageClass":       {Doc: "storage class name the cluster's volume claims ask for"},
	"patroniLeader":      {Doc: "pod name of the leader of Zalando's cluster <cluster>, as Patroni, its label, its server and its Service agree"},
	"sentinelMaster":     {Doc: "pod name of the Redis master of the RedisFailover <cluster>, as every Sentinel and Redis itself agree"},
}

// LookupQuery returns the query kind with the given name.
func LookupQuery(name string) (QueryKind, bool) {
	k, ok := queryKinds[name]
	k.Name = name
	return k, ok
}

// QueryKinds returns every query kind, sorted by name; an engine that answers
// cluster questions must implement each.
func QueryKinds() []QueryKind {
	out := make([]QueryKind, 0, len(queryKinds))
	for name := range queryKinds {
		k, _ := LookupQuery(name)
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ClusterAnswers reads the true answer to a query from the learner's cluster.
// The value is returned as a string (a pod name, a number, a reason).
type ClusterAnswers interface {
	Answer(ctx context.Context, q Query) (string, error)
}
