package lab

import "k8s.io/apimachinery/pkg/labels"

// The kinds of the labs of third-party operators (Zalando's Patroni-based
// PostgreSQL, Spotahome's Redis with Sentinel), which judge the real data
// plane: pods picked by their labels, and what the servers themselves say.

// PodSelector picks pods of a namespace by a label selector.
type PodSelector struct {
	Namespace string `yaml:"namespace,omitempty"` // default "default"
	Selector  string `yaml:"selector"`
}

func (p PodSelector) validate() []FieldError {
	if p.Selector == "" {
		return []FieldError{{"selector", "is required"}}
	}
	if _, err := labels.Parse(p.Selector); err != nil {
		return []FieldError{{"selector", err.Error()}}
	}
	return nil
}

// WaitPods waits until Count pods of the selector are ready.
type WaitPods struct {
	PodSelector `yaml:",inline"`
	Count       int `yaml:"count"`
}

// Validate implements Validator.
func (w *WaitPods) Validate() []FieldError {
	return append(w.validate(), positive("count", w.Count)...)
}

// DeletePod deletes the one ready pod the selector picks, records it as
// the pod deleted (the changed of patroniLeader and sentinelMaster), and
// waits until it is gone.
type DeletePod struct {
	PodSelector `yaml:",inline"`
	Force       bool `yaml:"force,omitempty"` // grace period 0
}

// Validate implements Validator.
func (d *DeletePod) Validate() []FieldError { return d.validate() }

// ExecInPod runs Command in Container of the one ready pod the selector
// picks.
type ExecInPod struct {
	PodSelector `yaml:",inline"`
	Container   string   `yaml:"container"`
	Command     []string `yaml:"command"`
}

// Validate implements Validator.
func (x *ExecInPod) Validate() []FieldError {
	errs := append(x.validate(), required("container", x.Container)...)
	if len(x.Command) == 0 {
		errs = append(errs, FieldError{"command", "is required"})
	}
	return errs
}

// PodsReady passes while Count pods of the selector are ready.
type PodsReady struct {
	PodSelector `yaml:",inline"`
	Count       int `yaml:"count"`
}

// Validate implements Validator.
func (p *PodsReady) Validate() []FieldError {
	return append(p.validate(), positive("count", p.Count)...)
}

// PatroniLeader judges a Zalando PostgreSQL cluster's leader by what
// Patroni and the server say, against the labels and the Service.
type PatroniLeader struct {
	Cluster   string `yaml:"cluster"`
	Namespace string `yaml:"namespace,omitempty"`
	// Changed asks that the leader is not the pod deletePod deleted.
	Changed bool `yaml:"changed,omitempty"`
	// Members, when set, is how many members the cluster must have: the
	// leader and Members-1 replicas streaming from it (a pod is ready, and
	// Patroni lists it running, before it streams).
	Members int `yaml:"members,omitempty"`
}

// Validate implements Validator.
func (p *PatroniLeader) Validate() []FieldError { return required("cluster", p.Cluster) }

// SentinelMaster judges a RedisFailover's master by what its Sentinels
// and its Redis servers say.
type SentinelMaster struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace,omitempty"`
	// Changed asks that the master is not the pod deletePod deleted.
	Changed bool `yaml:"changed,omitempty"`
}

// Validate implements Validator.
func (s *SentinelMaster) Validate() []FieldError { return required("name", s.Name) }

// ExecOutput passes when Command, run in Container of the one ready pod
// the selector picks, prints what Want (a regular expression) matches.
type ExecOutput struct {
	ExecInPod `yaml:",inline"`
	Want      string `yaml:"want"`
}

// Validate implements Validator.
func (x *ExecOutput) Validate() []FieldError {
	return append(append(x.ExecInPod.Validate(), required("want", x.Want)...), compiles("want", x.Want)...)
}

// positive says n must be at least 1.
func positive(field string, n int) []FieldError {
	if n < 1 {
		return []FieldError{{field, "must be at least 1"}}
	}
	return nil
}
