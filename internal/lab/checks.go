package lab

import (
	"fmt"
	"strings"
	"time"
)

func checkSpecs() []KindSpec {
	return append([]KindSpec{
		newSpec[Condition]("condition", "a condition of the PostgresCluster has the given status (and reason)", time.Minute, 2),
		newSpec[PrimaryChanged]("primaryChanged", "status.currentPrimary differs from the primary recorded when chaos ran", time.Minute, 2),
		newSpec[ExactlyOnePrimary]("exactlyOnePrimary", "exactly one pod carries the primary role label", 30*time.Second, 3),
		newSpec[RWEndpointsPointAtPrimary]("rwEndpointsPointAtPrimary", "the -rw Service's endpoints are exactly the current primary", 30*time.Second, 2),
		newSpec[ReplicasReady]("replicasReady", "status.readyReplicas equals count", 2*time.Minute, 2),
		newSpec[ObservedGenerationCaughtUp]("observedGenerationCaughtUp", "status.observedGeneration equals metadata.generation", 30*time.Second, 2),
		newSpec[RoleLeastPrivilege]("roleLeastPrivilege", "the role grants every needed verb, and the operator's ServiceAccount holds no permission beyond them through any binding", 10*time.Second, 1),
		newSpec[QuotaPresent]("quotaPresent", "the ResourceQuota still exists", 10*time.Second, 1),
		newSpec[QuotaEnforced]("quotaEnforced", "the ResourceQuota still limits its resources, within a bound the cluster's need justifies", 10*time.Second, 1),
		newSpec[SameCluster]("sameCluster", "the PostgresCluster is the one the exercise began with, not deleted and re-created", 10*time.Second, 1),
		newSpec[EventSeen]("eventSeen", "an event with the reason (and message pattern) was seen", time.Minute, 1),
		newSpec[LogLineSeen]("logLineSeen", "an operator log line matching the pattern was seen", time.Minute, 1),
		newSpec[ClaimsBound]("claimsBound", "every PersistentVolumeClaim of the cluster is Bound", time.Minute, 2),
		newSpec[ClaimsPending]("claimsPending", "at least one PersistentVolumeClaim of the cluster is Pending", time.Minute, 2),
		newSpec[ObjectExists]("objectExists", "an object exists", 30*time.Second, 1),
		newSpec[OperatorReady]("operatorReady", "the operator's Deployment has a ready replica", time.Minute, 2),
		newSpec[OperatorStopped]("operatorStopped", "the operator's Deployment has no ready replica", 30*time.Second, 2),
		newSpec[PrimaryIs]("primaryIs", "status.currentPrimary is the given instance and it carries the primary label", time.Minute, 2),
		newSpec[PodsReady]("podsReady", "count pods of the selector are ready", 2*time.Minute, 2),
		newSpec[PatroniLeader]("patroniLeader", "Patroni's leader is the one pod labelled spilo-role=master, its server is not in recovery, and the cluster's Service points at it (and, with changed, it is not the pod deleted)", 2*time.Minute, 2),
		newSpec[SentinelMaster]("sentinelMaster", "every Sentinel names the same master, that Redis answers ROLE master, and every other Redis replicates from it (and, with changed, it is not the pod deleted)", 2*time.Minute, 2),
		newSpec[ExecOutput]("execOutput", "a command in the one ready pod the selector picks prints what want matches (a row count, a key's value)", time.Minute, 1),
	}, controllerCheckSpecs()...)
}

// Condition checks a PostgresCluster condition.
type Condition struct {
	Target `yaml:",inline"`
	Type   string `yaml:"type"`
	Status string `yaml:"status"`
	Reason string `yaml:"reason,omitempty"`
}

// Validate implements Validator.
func (c *Condition) Validate() []FieldError {
	return append(oneOf("type", c.Type, conditionTypes, false), oneOf("status", c.Status, statuses, false)...)
}

// PrimaryChanged passes when the primary is not the one recorded at T0, or
// when the exercise started if it has no chaos.
type PrimaryChanged struct {
	Target `yaml:",inline"`
}

// ExactlyOnePrimary passes when one pod, and only one, is labelled primary.
type ExactlyOnePrimary struct {
	Target `yaml:",inline"`
}

// RWEndpointsPointAtPrimary passes when <cluster>-rw routes to the primary only.
type RWEndpointsPointAtPrimary struct {
	Target `yaml:",inline"`
}

// ReplicasReady passes when Count instances are ready.
type ReplicasReady struct {
	Target `yaml:",inline"`
	Count  int `yaml:"count"`
}

// Validate implements Validator.
func (r *ReplicasReady) Validate() []FieldError {
	if r.Count < 1 || r.Count > 10 {
		return []FieldError{{"count", fmt.Sprintf("must be 1..10, got %d", r.Count)}}
	}
	return nil
}

// ObservedGenerationCaughtUp passes when the operator has seen the latest spec.
type ObservedGenerationCaughtUp struct {
	Target `yaml:",inline"`
}

// RoleLeastPrivilege passes when Role grants every rule in Needs, and the
// ServiceAccount's effective permissions (what every ClusterRoleBinding
// and RoleBinding grants it, itself or through its groups) go no further
// than what it is meant to have. With ChartRules, what it needs and is
// meant to have is what the operator's chart grants (its ClusterRole and
// Roles), so the lab follows the operator as its permissions change;
// otherwise it is Needs, cluster-wide.
type RoleLeastPrivilege struct {
	Role       string       `yaml:"role"`
	RoleKind   string       `yaml:"roleKind,omitempty"` // ClusterRole (default) or Role
	Namespace  string       `yaml:"namespace,omitempty"`
	ChartRules bool         `yaml:"chartRules,omitempty"`
	Needs      []PolicyRule `yaml:"needs,omitempty"`
	// ServiceAccount is the subject judged, "namespace/name"; by default
	// the operator's (oplab-system/pg-operator).
	ServiceAccount string `yaml:"serviceAccount,omitempty"`
}

// PolicyRule is a needed permission.
type PolicyRule struct {
	APIGroups []string `yaml:"apiGroups"`
	Resources []string `yaml:"resources"`
	Verbs     []string `yaml:"verbs"`
}

// Validate implements Validator.
func (r *RoleLeastPrivilege) Validate() []FieldError {
	errs := dnsName("role", r.Role)
	errs = append(errs, oneOf("roleKind", r.RoleKind, roleKinds, true)...)
	if len(r.Needs) == 0 && !r.ChartRules {
		errs = append(errs, FieldError{"needs", "needs at least one rule, or chartRules: true"})
	}
	if r.ServiceAccount != "" {
		ns, name, ok := strings.Cut(r.ServiceAccount, "/")
		if !ok {
			errs = append(errs, FieldError{"serviceAccount", fmt.Sprintf("want namespace/name, got %q", r.ServiceAccount)})
		} else {
			errs = append(errs, dnsName("serviceAccount", ns)...)
			errs = append(errs, dnsName("serviceAccount", name)...)
		}
	}
	for i, n := range r.Needs {
		p := fmt.Sprintf("needs[%d]", i)
		if len(n.APIGroups) == 0 {
			errs = append(errs, FieldError{p + ".apiGroups", `needs at least one group ("" is the core group)`})
		}
		if len(n.Resources) == 0 {
			errs = append(errs, FieldError{p + ".resources", "needs at least one resource"})
		}
		errs = append(errs, verbs(p+".verbs", n.Verbs, false)...)
	}
	return errs
}

// QuotaPresent passes while the named ResourceQuota exists.
type QuotaPresent struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// Validate implements Validator.
func (q *QuotaPresent) Validate() []FieldError {
	return append(dnsName("name", q.Name), dnsName("namespace", q.Namespace)...)
}

// QuotaEnforced passes while the named ResourceQuota, in the
// PostgresCluster's namespace, still does its job: it limits each of
// Resources, is not scoped away from the cluster's pods, and no limit
// exceeds MaxFactor times what the PostgresCluster's instances need
// (spec.replicas times each instance's request or limit).
type QuotaEnforced struct {
	Target `yaml:",inline"`
	Name   string `yaml:"name"`
	// StatefulSet, when set, is the workload whose need bounds the quota
	// (a third-party operator's, in the quota's namespace); by default the
	// target's PostgresCluster.
	StatefulSet string   `yaml:"statefulSet,omitempty"`
	Resources   []string `yaml:"resources"`
	MaxFactor   float64  `yaml:"maxFactor"`
}

// QuotaResources are the quota resources whose need QuotaEnforced can
// compute from a PostgresCluster.
var QuotaResources = []string{"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "pods", "persistentvolumeclaims", "requests.storage"}

// Validate implements Validator.
func (q *QuotaEnforced) Validate() []FieldError {
	errs := dnsName("name", q.Name)
	if q.StatefulSet != "" {
		errs = append(errs, dnsName("statefulSet", q.StatefulSet)...)
	}
	if len(q.Resources) == 0 {
		errs = append(errs, FieldError{"resources", "list the resources the quota must keep limiting"})
	}
	for i, r := range q.Resources {
		errs = append(errs, oneOf(fmt.Sprintf("resources[%d]", i), r, QuotaResources, false)...)
	}
	if q.MaxFactor < 1 {
		errs = append(errs, FieldError{"maxFactor", fmt.Sprintf("must be at least 1 (a limit below the need blocks the cluster), got %v", q.MaxFactor)})
	}
	return errs
}

// SameCluster passes while the PostgresCluster has the identity (UID) it
// had when the chaos ran, or when the exercise began without chaos.
type SameCluster struct {
	Target `yaml:",inline"`
}

// EventSeen passes when an event with Reason (and a message matching
// Message) was recorded since the exercise started.
type EventSeen struct {
	// Target is the cluster the event must be about: the PostgresCluster
	// itself or one of its objects (named after it), in its namespace. A
	// genuine event about another cluster — a decoy the learner made and
	// switched over — is not evidence about this one.
	Target  `yaml:",inline"`
	Reason  string `yaml:"reason"`
	Message string `yaml:"message,omitempty"`
}

// Validate implements Validator.
func (e *EventSeen) Validate() []FieldError {
	return append(required("reason", e.Reason), compiles("message", e.Message)...)
}

// LogLineSeen passes when an operator log line matching Pattern was seen
// since the exercise started.
type LogLineSeen struct {
	Pattern string `yaml:"pattern"`
}

// Validate implements Validator.
func (l *LogLineSeen) Validate() []FieldError {
	return append(required("pattern", l.Pattern), compiles("pattern", l.Pattern)...)
}

// ClaimsBound passes when the claims the cluster's instances mount
// (data-<cluster>-<i> for each of spec.replicas) are all bound to a volume
// that is bound to them, and, with StorageClassName, ask for that class.
type ClaimsBound struct {
	Target           `yaml:",inline"`
	StorageClassName string `yaml:"storageClassName,omitempty"`
}

// ClaimsPending passes when a claim of the cluster is Pending.
type ClaimsPending struct {
	Target `yaml:",inline"`
}

// ObjectExists passes when the object exists and, with OwnedBy, is
// controlled by that PostgresCluster (its operator made it, not a hand).
type ObjectExists struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Name       string `yaml:"name"`
	Namespace  string `yaml:"namespace,omitempty"`
	OwnedBy    string `yaml:"ownedBy,omitempty"`
}

// Validate implements Validator.
func (o *ObjectExists) Validate() []FieldError {
	errs := required("apiVersion", o.APIVersion)
	errs = append(errs, required("kind", o.Kind)...)
	errs = append(errs, dnsName("name", o.Name)...)
	if o.OwnedBy != "" {
		errs = append(errs, dnsName("ownedBy", o.OwnedBy)...)
	}
	return errs
}

// OperatorReady passes when the operator is running.
type OperatorReady struct{}

// OperatorStopped passes while the operator is not running.
type OperatorStopped struct{}

// PrimaryIs passes when Instance is the primary.
type PrimaryIs struct {
	Target   `yaml:",inline"`
	Instance string `yaml:"instance"`
}

// Validate implements Validator.
func (p *PrimaryIs) Validate() []FieldError { return dnsName("instance", p.Instance) }
