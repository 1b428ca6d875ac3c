// Package netpolicy decides what a network that enforces NetworkPolicy
// lets through, by the NetworkPolicy API's own rules (networking.k8s.io/v1),
// for tests on hosts whose CNI enforces none: the kind host built offline
// here runs the bridge CNI, so the pods provider's network wall is checked
// by evaluating its policies against the pods and namespaces they govern.
//
// The rules, as the API documents them (NetworkPolicySpec and its parts):
//   - A pod is isolated for ingress when a policy of its namespace selects
//     it (spec.podSelector; {} selects every pod of the namespace) and has
//     Ingress among its policyTypes; for egress likewise with Egress. An
//     isolated pod takes only what some rule of one of those policies
//     allows; a pod no policy isolates takes everything. Policies add up.
//   - policyTypes left empty means Ingress, plus Egress when the policy
//     has egress rules.
//   - A connection needs both ends: the source's egress and the
//     destination's ingress. An address outside the cluster has no
//     policies of its own.
//   - A rule's from/to, left empty, matches every peer; its ports, left
//     empty, every port. A policy with the type and no rules allows
//     nothing; a rule {} allows everything.
//   - A peer is one of: podSelector alone (pods of the policy's own
//     namespace), namespaceSelector alone (every pod of the namespaces it
//     selects), both in one peer (the pods podSelector selects in the
//     namespaces namespaceSelector selects: an AND, where two peers are an
//     OR), or ipBlock (addresses in its CIDR and none of its excepts). An
//     empty selector ({}) selects all; an absent one does not take part.
//   - A port matches by protocol (TCP when not given) and number, a
//     range port..endPort, or the name of a container port of the
//     destination pod; a port without a number matches every port of its
//     protocol.
//   - Every namespace carries the label kubernetes.io/metadata.name with
//     its name, which the API server sets.
package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// NamespaceNameLabel is the label the API server puts on every namespace,
// its value the namespace's name.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// Endpoint is one end of a connection: a pod (Namespace set) or an
// address outside the cluster (Namespace empty).
type Endpoint struct {
	// Namespace and Labels are the pod's; empty for an address outside
	// the cluster.
	Namespace string
	Labels    map[string]string
	// IP is the pod's or the outside address; ipBlock peers match it.
	IP string
	// Ports are the destination pod's container ports, by which a policy
	// may name a port.
	Ports []corev1.ContainerPort
}

// Pod is the endpoint of pod p.
func Pod(p corev1.Pod) Endpoint {
	e := Endpoint{Namespace: p.Namespace, Labels: p.Labels, IP: p.Status.PodIP}
	for _, c := range p.Spec.Containers {
		e.Ports = append(e.Ports, c.Ports...)
	}
	return e
}

// Outside is an address outside the cluster.
func Outside(ip string) Endpoint { return Endpoint{IP: ip} }

// Network is what decides: the cluster's namespaces, by name with their
// labels, and its NetworkPolicies.
type Network struct {
	Namespaces map[string]map[string]string
	Policies   []networkingv1.NetworkPolicy
}

// Port is the destination port of a connection.
type Port struct {
	Protocol corev1.Protocol // TCP when empty
	Number   int32
}

// TCP is TCP port n.
func TCP(n int32) Port { return Port{Protocol: corev1.ProtocolTCP, Number: n} }

// Allows reports whether from may open port on to: from's egress and to's
// ingress both allow it.
func (n Network) Allows(from, to Endpoint, port Port) (bool, error) {
	out, err := n.Egress(from, to, port)
	if err != nil || !out {
		return false, err
	}
	return n.Ingress(from, to, port)
}

// Ingress reports whether to's ingress policies let from open port on it.
func (n Network) Ingress(from, to Endpoint, port Port) (bool, error) {
	return n.allows(networkingv1.PolicyTypeIngress, to, from, to, port)
}

// Egress reports whether from's egress policies let it open port on to.
func (n Network) Egress(from, to Endpoint, port Port) (bool, error) {
	return n.allows(networkingv1.PolicyTypeEgress, from, to, to, port)
}

// allows decides for the policies of type typ that govern pod: may it
// reach, or be reached by, peer on port of dst (the connection's
// destination, whose named ports count)?
func (n Network) allows(typ networkingv1.PolicyType, pod, peer, dst Endpoint, port Port) (bool, error) {
	if pod.Namespace == "" {
		return true, nil // outside the cluster: no policy governs it
	}
	if _, ok := n.Namespaces[pod.Namespace]; !ok {
		return false, fmt.Errorf("namespace %q of a pod is not in the network", pod.Namespace)
	}
	isolated := false
	for _, np := range n.Policies {
		if np.Namespace != pod.Namespace {
			continue
		}
		sel, err := selector(&np.Spec.PodSelector)
		if err != nil {
			return false, fmt.Errorf("policy %s/%s: podSelector: %w", np.Namespace, np.Name, err)
		}
		if !sel.Matches(labels.Set(pod.Labels)) || !hasType(np.Spec, typ) {
			continue
		}
		isolated = true
		for i, r := range rules(np.Spec, typ) {
			peerOK, err := n.anyPeer(np.Namespace, r.peers, peer)
			if err != nil {
				return false, fmt.Errorf("policy %s/%s: %s rule %d: %w", np.Namespace, np.Name, typ, i, err)
			}
			portOK, err := anyPort(r.ports, port, dst)
			if err != nil {
				return false, fmt.Errorf("policy %s/%s: %s rule %d: %w", np.Namespace, np.Name, typ, i, err)
			}
			if peerOK && portOK {
				return true, nil
			}
		}
	}
	return !isolated, nil
}

// hasType says whether a policy affects traffic of typ: its policyTypes,
// or when none are given, Ingress always and Egress when it has egress
// rules.
func hasType(s networkingv1.NetworkPolicySpec, typ networkingv1.PolicyType) bool {
	if len(s.PolicyTypes) == 0 {
		return typ == networkingv1.PolicyTypeIngress || typ == networkingv1.PolicyTypeEgress && len(s.Egress) > 0
	}
	for _, t := range s.PolicyTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// rule is an ingress or egress rule: its peers (from or to) and ports.
type rule struct {
	peers []networkingv1.NetworkPolicyPeer
	ports []networkingv1.NetworkPolicyPort
}

func rules(s networkingv1.NetworkPolicySpec, typ networkingv1.PolicyType) []rule {
	var out []rule
	if typ == networkingv1.PolicyTypeIngress {
		for _, r := range s.Ingress {
			out = append(out, rule{r.From, r.Ports})
		}
		return out
	}
	for _, r := range s.Egress {
		out = append(out, rule{r.To, r.Ports})
	}
	return out
}

// anyPeer says whether e is among peers, as a policy of namespace ns
// reads them: an empty list is everyone.
func (n Network) anyPeer(ns string, peers []networkingv1.NetworkPolicyPeer, e Endpoint) (bool, error) {
	if len(peers) == 0 {
		return true, nil
	}
	for _, p := range peers {
		ok, err := n.peer(ns, p, e)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func (n Network) peer(ns string, p networkingv1.NetworkPolicyPeer, e Endpoint) (bool, error) {
	if p.IPBlock != nil {
		if p.PodSelector != nil || p.NamespaceSelector != nil {
			return false, errors.New("a peer with ipBlock may have no selector")
		}
		return inBlock(p.IPBlock, e.IP)
	}
	if p.PodSelector == nil && p.NamespaceSelector == nil {
		return false, errors.New("a peer needs a podSelector, a namespaceSelector or an ipBlock")
	}
	if e.Namespace == "" {
		return false, nil // selectors select pods only
	}
	if p.NamespaceSelector == nil {
		if e.Namespace != ns {
			return false, nil // podSelector alone: the policy's own namespace
		}
	} else {
		sel, err := selector(p.NamespaceSelector)
		if err != nil {
			return false, fmt.Errorf("namespaceSelector: %w", err)
		}
		nsLabels, ok := n.Namespaces[e.Namespace]
		if !ok {
			return false, fmt.Errorf("namespace %q of a peer is not in the network", e.Namespace)
		}
		if !sel.Matches(labels.Set(withName(e.Namespace, nsLabels))) {
			return false, nil
		}
	}
	if p.PodSelector == nil {
		return true, nil // namespaceSelector alone: every pod there
	}
	sel, err := selector(p.PodSelector)
	if err != nil {
		return false, fmt.Errorf("podSelector: %w", err)
	}
	return sel.Matches(labels.Set(e.Labels)), nil
}

// withName is a namespace's labels with the one the API server sets.
func withName(name string, l map[string]string) map[string]string {
	out := map[string]string{NamespaceNameLabel: name}
	for k, v := range l {
		if k != NamespaceNameLabel {
			out[k] = v
		}
	}
	return out
}

func inBlock(b *networkingv1.IPBlock, ip string) (bool, error) {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return false, fmt.Errorf("ipBlock cidr: %w", err)
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false, nil // an endpoint without an address is in no block
	}
	if !cidr.Contains(addr) {
		return false, nil
	}
	for _, ex := range b.Except {
		p, err := netip.ParsePrefix(ex)
		if err != nil {
			return false, fmt.Errorf("ipBlock except: %w", err)
		}
		if p.Contains(addr) {
			return false, nil
		}
	}
	return true, nil
}

// anyPort says whether port is among ports, named ports read on dst; an
// empty list is every port.
func anyPort(ports []networkingv1.NetworkPolicyPort, port Port, dst Endpoint) (bool, error) {
	if len(ports) == 0 {
		return true, nil
	}
	proto := port.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, p := range ports {
		want := corev1.ProtocolTCP
		if p.Protocol != nil {
			want = *p.Protocol
		}
		if want != proto {
			continue
		}
		switch {
		case p.Port == nil:
			if p.EndPort != nil {
				return false, errors.New("endPort needs a port")
			}
			return true, nil
		case p.Port.Type == intstr.String:
			if p.EndPort != nil {
				return false, errors.New("endPort needs a numeric port")
			}
			for _, cp := range dst.Ports {
				cpProto := cp.Protocol
				if cpProto == "" {
					cpProto = corev1.ProtocolTCP
				}
				if cp.Name == p.Port.StrVal && cp.ContainerPort == port.Number && cpProto == proto {
					return true, nil
				}
			}
		default:
			lo, hi := p.Port.IntVal, p.Port.IntVal
			if p.EndPort != nil {
				if *p.EndPort < lo {
					return false, fmt.Errorf("endPort %d below port %d", *p.EndPort, lo)
				}
				hi = *p.EndPort
			}
			if lo <= port.Number && port.Number <= hi {
				return true, nil
			}
		}
	}
	return false, nil
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}
