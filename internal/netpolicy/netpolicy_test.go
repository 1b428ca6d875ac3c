package netpolicy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The cluster of the table: namespaces default, prod and dev of team a,
// other of team b; pods in them; addresses outside.
var (
	namespaces = map[string]map[string]string{
		"default": {},
		"prod":    {"team": "a", "env": "prod"},
		"dev":     {"team": "a", "env": "dev"},
		"other":   {"team": "b"},
	}
	web = Endpoint{Namespace: "default", Labels: map[string]string{"app": "web"}, IP: "10.0.0.10",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	db = Endpoint{Namespace: "default", Labels: map[string]string{"app": "db", "tier": "data"}, IP: "10.0.0.11",
		Ports: []corev1.ContainerPort{{Name: "pg", ContainerPort: 5432}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}}
	client     = Endpoint{Namespace: "default", Labels: map[string]string{"role": "client"}, IP: "10.0.0.12"}
	prodClient = Endpoint{Namespace: "prod", Labels: map[string]string{"role": "client"}, IP: "10.0.1.1"}
	prodOther  = Endpoint{Namespace: "prod", Labels: map[string]string{"role": "batch"}, IP: "10.0.1.2"}
	devClient  = Endpoint{Namespace: "dev", Labels: map[string]string{"role": "client"}, IP: "10.0.2.1"}
	otherWeb   = Endpoint{Namespace: "other", Labels: map[string]string{"app": "web"}, IP: "10.0.3.1"}
	outside    = Outside("203.0.113.5")
	outside2   = Outside("203.0.113.77")
)

// policy is a NetworkPolicy of namespace ns selecting pods by sel.
func policy(ns string, sel metav1.LabelSelector, types []networkingv1.PolicyType, in []networkingv1.NetworkPolicyIngressRule, out []networkingv1.NetworkPolicyEgressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
		Spec:       networkingv1.NetworkPolicySpec{PodSelector: sel, PolicyTypes: types, Ingress: in, Egress: out},
	}
}

func match(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

var (
	all      = metav1.LabelSelector{}
	ingress  = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	egress   = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	both     = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	tcp, udp = corev1.ProtocolTCP, corev1.ProtocolUDP
)

func from(peers ...networkingv1.NetworkPolicyPeer) []networkingv1.NetworkPolicyIngressRule {
	return []networkingv1.NetworkPolicyIngressRule{{From: peers}}
}

func port(n int32) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(n))}
}

// TestAllows holds the evaluator to the NetworkPolicy API's documented
// semantics (the NetworkPolicySpec, NetworkPolicyPeer and NetworkPolicyPort
// fields' comments, and the "Network Policies" concept page's examples).
func TestAllows(t *testing.T) {
	dbOnly := *match("app", "db")
	for _, tc := range []struct {
		name     string
		policies []networkingv1.NetworkPolicy
		from, to Endpoint
		port     Port
		want     bool
	}{
		// Isolation.
		{name: "no policy: every pod takes everything", from: client, to: db, port: TCP(5432), want: true},
		{name: "default deny ingress", policies: []networkingv1.NetworkPolicy{policy("default", all, ingress, nil, nil)},
			from: client, to: db, port: TCP(5432), want: false},
		{name: "default deny ingress leaves egress alone", policies: []networkingv1.NetworkPolicy{policy("default", all, ingress, nil, nil)},
			from: db, to: outside, port: TCP(443), want: true},
		{name: "default deny ingress: an outside address is refused too", policies: []networkingv1.NetworkPolicy{policy("default", all, ingress, nil, nil)},
			from: outside, to: web, port: TCP(8080), want: false},
		{name: "allow all ingress ({} rule) beside default deny: policies add up",
			policies: []networkingv1.NetworkPolicy{policy("default", all, ingress, nil, nil), policy("default", all, ingress, []networkingv1.NetworkPolicyIngressRule{{}}, nil)},
			from:     otherWeb, to: db, port: TCP(1), want: true},
		{name: "default deny egress", policies: []networkingv1.NetworkPolicy{policy("default", all, egress, nil, nil)},
			from: web, to: outside, port: TCP(443), want: false},
		{name: "default deny egress leaves ingress alone", policies: []networkingv1.NetworkPolicy{policy("default", all, egress, nil, nil)},
			from: outside, to: web, port: TCP(8080), want: true},
		{name: "egress denied at the source though the destination takes all", policies: []networkingv1.NetworkPolicy{policy("default", *match("role", "client"), egress, nil, nil)},
			from: client, to: db, port: TCP(5432), want: false},
		{name: "ingress denied at the destination though the source may send", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, nil, nil)},
			from: client, to: db, port: TCP(5432), want: false},
		{name: "a policy selects pods of its own namespace only", policies: []networkingv1.NetworkPolicy{policy("prod", all, both, nil, nil)},
			from: client, to: db, port: TCP(5432), want: true},
		{name: "a pod the policy's podSelector misses is not isolated", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, nil, nil)},
			from: client, to: web, port: TCP(8080), want: true},
		{name: "matchExpressions select", policies: []networkingv1.NetworkPolicy{policy("default",
			metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}, ingress, nil, nil)},
			from: client, to: db, port: TCP(5432), want: false},

		// policyTypes left empty.
		{name: "no policyTypes, ingress rules only: ingress", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, nil, from(networkingv1.NetworkPolicyPeer{PodSelector: match("app", "web")}), nil)},
			from: client, to: db, port: TCP(5432), want: false},
		{name: "no policyTypes, ingress rules only: egress untouched", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, nil, nil, nil)},
			from: db, to: outside, port: TCP(443), want: true},
		{name: "no policyTypes, egress rules: egress too", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, nil, nil,
			[]networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: match("app", "web")}}}})},
			from: db, to: outside, port: TCP(443), want: false},
		{name: "no policyTypes, egress rules only: ingress is still isolated, with no rule", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, nil, nil,
			[]networkingv1.NetworkPolicyEgressRule{{}})},
			from: web, to: db, port: TCP(5432), want: false},
		{name: "policyTypes Egress alone: ingress rules ignored, ingress open", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, egress, from(networkingv1.NetworkPolicyPeer{PodSelector: match("app", "none")}), nil)},
			from: web, to: db, port: TCP(5432), want: true},

		// Peers: podSelector alone.
		{name: "podSelector alone: a pod of the policy's namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{PodSelector: match("role", "client")}), nil)},
			from: client, to: db, port: TCP(5432), want: true},
		{name: "podSelector alone: the same labels in another namespace do not match", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{PodSelector: match("role", "client")}), nil)},
			from: prodClient, to: db, port: TCP(5432), want: false},
		{name: "empty podSelector alone: every pod of the policy's namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}}), nil)},
			from: web, to: db, port: TCP(5432), want: true},
		{name: "empty podSelector alone: no pod of another namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}}), nil)},
			from: otherWeb, to: db, port: TCP(5432), want: false},
		{name: "a pod selector never matches an outside address", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}}), nil)},
			from: outside, to: db, port: TCP(5432), want: false},

		// Peers: namespaceSelector alone.
		{name: "namespaceSelector alone: every pod of a selected namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("team", "a")}), nil)},
			from: devClient, to: db, port: TCP(5432), want: true},
		{name: "namespaceSelector alone: not the policy's own namespace unless selected", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("team", "a")}), nil)},
			from: client, to: db, port: TCP(5432), want: false},
		{name: "namespaceSelector alone: an unselected namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("team", "a")}), nil)},
			from: otherWeb, to: db, port: TCP(5432), want: false},
		{name: "empty namespaceSelector: every pod of every namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{}}), nil)},
			from: otherWeb, to: db, port: TCP(5432), want: true},
		{name: "empty namespaceSelector: not an outside address", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{}}), nil)},
			from: outside, to: db, port: TCP(5432), want: false},
		{name: "the namespace's name label, which the API server sets", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match(NamespaceNameLabel, "prod")}), nil)},
			from: prodOther, to: db, port: TCP(5432), want: true},
		{name: "the name label names no other namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match(NamespaceNameLabel, "prod")}), nil)},
			from: devClient, to: db, port: TCP(5432), want: false},

		// Peers: both selectors in one peer are an AND, two peers an OR.
		{name: "both in one peer: the pod in the namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod"), PodSelector: match("role", "client")}), nil)},
			from: prodClient, to: db, port: TCP(5432), want: true},
		{name: "both in one peer: the pod's labels in another namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod"), PodSelector: match("role", "client")}), nil)},
			from: devClient, to: db, port: TCP(5432), want: false},
		{name: "both in one peer: another pod of the namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod"), PodSelector: match("role", "client")}), nil)},
			from: prodOther, to: db, port: TCP(5432), want: false},
		{name: "both in one peer: not the policy's namespace, though the pod matches", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod"), PodSelector: match("role", "client")}), nil)},
			from: client, to: db, port: TCP(5432), want: false},
		{name: "two peers: the namespace's any pod", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod")}, networkingv1.NetworkPolicyPeer{PodSelector: match("role", "client")}), nil)},
			from: prodOther, to: db, port: TCP(5432), want: true},
		{name: "two peers: the pod in the policy's namespace", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod")}, networkingv1.NetworkPolicyPeer{PodSelector: match("role", "client")}), nil)},
			from: client, to: db, port: TCP(5432), want: true},
		{name: "two peers: neither", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{NamespaceSelector: match("env", "prod")}, networkingv1.NetworkPolicyPeer{PodSelector: match("role", "client")}), nil)},
			from: devClient, to: db, port: TCP(5432), want: false},
		{name: "from left empty: every source", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(5432)}}}, nil)},
			from: outside, to: db, port: TCP(5432), want: true},

		// Peers: ipBlock.
		{name: "ipBlock: an address in the CIDR", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "203.0.113.0/24", Except: []string{"203.0.113.0/26"}}}), nil)},
			from: outside2, to: db, port: TCP(5432), want: true},
		{name: "ipBlock: an address in an except", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "203.0.113.0/24", Except: []string{"203.0.113.0/26"}}}), nil)},
			from: outside, to: db, port: TCP(5432), want: false},
		{name: "ipBlock: an address outside the CIDR", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "198.51.100.0/24"}}), nil)},
			from: outside, to: db, port: TCP(5432), want: false},
		{name: "ipBlock in egress", policies: []networkingv1.NetworkPolicy{policy("default", all, egress, nil, []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"203.0.113.0/24"}}}}}})},
			from: web, to: outside, port: TCP(443), want: false},
		{name: "ipBlock in egress: a pod's address counts", policies: []networkingv1.NetworkPolicy{policy("default", all, egress, nil, []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/24"}}}}})},
			from: web, to: db, port: TCP(5432), want: true},

		// Ports.
		{name: "a port", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(5432)}}}, nil)},
			from: web, to: db, port: TCP(5432), want: true},
		{name: "another port", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(5432)}}}, nil)},
			from: web, to: db, port: TCP(5433), want: false},
		{name: "a port's protocol is TCP when not given: UDP refused", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(5432)}}}, nil)},
			from: web, to: db, port: Port{Protocol: udp, Number: 5432}, want: false},
		{name: "a connection's protocol is TCP when not given", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromInt32(5432))}}}}, nil)},
			from: web, to: db, port: Port{Number: 5432}, want: true},
		{name: "a port range", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(5000)), EndPort: ptr.To[int32](6000)}}}}, nil)},
			from: web, to: db, port: TCP(6000), want: true},
		{name: "past a port range", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(5000)), EndPort: ptr.To[int32](6000)}}}}, nil)},
			from: web, to: db, port: TCP(6001), want: false},
		{name: "a named port of the destination", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromString("pg"))}}}}, nil)},
			from: web, to: db, port: TCP(5432), want: true},
		{name: "a named port the destination gives another number", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromString("pg"))}}}}, nil)},
			from: web, to: db, port: TCP(8080), want: false},
		{name: "a named port of its protocol", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: ptr.To(intstr.FromString("dns"))}}}}, nil)},
			from: web, to: db, port: Port{Protocol: udp, Number: 53}, want: true},
		{name: "a named egress port is the destination's", policies: []networkingv1.NetworkPolicy{policy("default", *match("app", "web"), egress, nil, []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromString("pg"))}}}})},
			from: web, to: db, port: TCP(5432), want: true},
		{name: "every port of a protocol", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp}}}}, nil)},
			from: web, to: db, port: Port{Protocol: udp, Number: 9999}, want: true},
		{name: "every port of a protocol: not the other", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp}}}}, nil)},
			from: web, to: db, port: TCP(9999), want: false},
		{name: "peer and port in one rule must both match", policies: []networkingv1.NetworkPolicy{policy("default", dbOnly, ingress, []networkingv1.NetworkPolicyIngressRule{
			{From: []networkingv1.NetworkPolicyPeer{{PodSelector: match("app", "web")}}, Ports: []networkingv1.NetworkPolicyPort{port(5432)}},
			{From: []networkingv1.NetworkPolicyPeer{{PodSelector: match("role", "client")}}, Ports: []networkingv1.NetworkPolicyPort{port(9187)}},
		}, nil)},
			from: client, to: db, port: TCP(5432), want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Network{Namespaces: namespaces, Policies: tc.policies}
			got, err := n.Allows(tc.from, tc.to, tc.port)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("from %s/%v (%s) to %s/%v (%s) on %v: got %v, want %v", tc.from.Namespace, tc.from.Labels, tc.from.IP, tc.to.Namespace, tc.to.Labels, tc.to.IP, tc.port, got, tc.want)
			}
		})
	}
}

// TestInvalid: what the API server would refuse is an error, not a guess.
func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		peer networkingv1.NetworkPolicyPeer
		port networkingv1.NetworkPolicyPort
		want string
	}{
		{name: "a peer with nothing", want: "needs a podSelector"},
		{name: "ipBlock with a selector", peer: networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: &metav1.LabelSelector{}}, want: "ipBlock"},
		{name: "a bad CIDR", peer: networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0"}}, want: "cidr"},
		{name: "endPort with a named port", peer: networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}},
			port: networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromString("pg")), EndPort: ptr.To[int32](6000)}, want: "endPort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{tc.peer}}
			if tc.port != (networkingv1.NetworkPolicyPort{}) {
				r.Ports = []networkingv1.NetworkPolicyPort{tc.port}
			}
			n := Network{Namespaces: namespaces, Policies: []networkingv1.NetworkPolicy{policy("default", all, ingress, []networkingv1.NetworkPolicyIngressRule{r}, nil)}}
			if _, err := n.Allows(web, db, TCP(5432)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
