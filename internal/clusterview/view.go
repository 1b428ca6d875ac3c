package clusterview

import "time"

// View is a snapshot of a PostgresCluster and its surroundings, as the
// browser's cluster view shows it. Its JSON is a contract with the page.
type View struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Cluster is nil while the PostgresCluster does not exist.
	Cluster *Cluster `json:"cluster"`
	// Pods are the first MaxPods of the instance pods by name; PodsMore
	// counts the others.
	Pods      []Pod      `json:"pods"`
	PodsMore  int        `json:"podsMore"`
	Endpoints []Endpoint `json:"endpoints"`
	// Events are the namespace's newest events, newest first; EventsMore
	// counts the older ones left out.
	Events     []Event `json:"events"`
	EventsMore int     `json:"eventsMore"`
}

// bound cuts v to what a View carries (MaxPods, MaxAddresses,
// MaxConditions, MaxText), counting what it leaves out; v's pods and
// addresses are sorted.
func (v *View) bound() {
	if n := len(v.Pods); n > MaxPods {
		v.Pods, v.PodsMore = v.Pods[:MaxPods:MaxPods], v.PodsMore+n-MaxPods
	}
	for i, e := range v.Endpoints {
		if n := len(e.Addresses); n > MaxAddresses {
			v.Endpoints[i].Addresses, v.Endpoints[i].AddressesMore = e.Addresses[:MaxAddresses:MaxAddresses], e.AddressesMore+n-MaxAddresses
		}
	}
	if c := v.Cluster; c != nil {
		c.Phase, c.CurrentPrimary, c.TargetPrimary = text(c.Phase), text(c.CurrentPrimary), text(c.TargetPrimary)
		if len(c.Conditions) > MaxConditions {
			c.Conditions = c.Conditions[:MaxConditions:MaxConditions]
		}
	}
}

// Cluster is the PostgresCluster's spec and status that matter to a viewer.
type Cluster struct {
	Phase              string      `json:"phase,omitempty"`
	Replicas           int32       `json:"replicas"` // desired
	ReadyReplicas      int32       `json:"readyReplicas"`
	CurrentPrimary     string      `json:"currentPrimary,omitempty"`
	TargetPrimary      string      `json:"targetPrimary,omitempty"`
	Generation         int64       `json:"generation"`
	ObservedGeneration int64       `json:"observedGeneration"`
	Conditions         []Condition `json:"conditions,omitempty"`
	Deleting           bool        `json:"deleting,omitempty"`
}

// Condition is one of the PostgresCluster's status conditions.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// Pod is an instance pod of the cluster.
type Pod struct {
	Name     string    `json:"name"`
	Role     string    `json:"role,omitempty"` // primary, replica, unhealthy
	Phase    string    `json:"phase"`
	Ready    bool      `json:"ready"`
	Deleting bool      `json:"deleting,omitempty"`
	IP       string    `json:"ip,omitempty"`
	Node     string    `json:"node,omitempty"`
	Created  time.Time `json:"created"`
}

// Endpoint is what one of the cluster's Services (-rw, -ro) sends traffic
// to, from its EndpointSlices.
type Endpoint struct {
	Service string `json:"service"`
	// Addresses are the first MaxAddresses by pod and address;
	// AddressesMore counts the others.
	Addresses     []Address `json:"addresses"`
	AddressesMore int       `json:"addressesMore"`
}

// Address is one endpoint of a Service.
type Address struct {
	IP    string `json:"ip"`
	Pod   string `json:"pod,omitempty"`
	Ready bool   `json:"ready"`
}

// Event is a Kubernetes event of the namespace. Time is when it last
// happened: "at", as every event the browser gets (docs/api.md).
type Event struct {
	Type    string    `json:"type"` // Normal or Warning
	Reason  string    `json:"reason"`
	Object  string    `json:"object"` // Kind/name
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
	Time    time.Time `json:"at"`
}

// Primary returns the pod labelled primary that is ready, or "".
func (v View) Primary() string {
	for _, p := range v.Pods {
		if p.Role == "primary" && p.Ready && !p.Deleting {
			return p.Name
		}
	}
	return ""
}

// Condition returns the status of condition typ ("" when absent).
func (c *Cluster) Condition(typ string) string {
	if c == nil {
		return ""
	}
	for _, cd := range c.Conditions {
		if cd.Type == typ {
			return cd.Status
		}
	}
	return ""
}
