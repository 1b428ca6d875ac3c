package kind

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// The wall: what a kind cluster's node may open a connection to.
//
// A node container shares a bridge with every other learner's node and
// with the machine (its address on the bridge), and nothing there filters
// what crosses it: the engine may run without iptables (hack/kind/env.sh's
// private dockerd does), and even where it has them, containers of one
// network reach each other. Whatever a learner's cluster does for its
// admin starts in the node's network namespace: the API server calling a
// webhook, an aggregated API or a conversion webhook at any URL the
// learner writes; and every pod's traffic leaves through it (a pod of
// their own, their controller, an operator). So each node refuses, in its
// own namespace, every new connection to a private, shared or link-local
// address (RFC 1918, RFC 6598, 169.254.0.0/16 and the cloud metadata
// address in it, IPv6 unique-local and link-local) and to the node's own
// networks, but for what the cluster is made of: its nodes, its pods, its
// Services and its DNS servers. Connections from outside in (the server
// to the published API server port) and their answers pass. Public
// addresses stay reachable, as they are from the learner's browser.
//
// The rules are a chain of their own, first in OUTPUT (the node's own
// processes: the API server, the kubelet, containerd, host-network pods)
// and FORWARD (pods), so that no ACCEPT of kube-proxy's, which a Service
// with endpoints of the learner's choosing would meet first, lets a
// connection through.

// wallChain is the chain of the node's rules.
const wallChain = "OPLAB-WALL"

// privateV4 and privateV6 are the addresses no node connects to unless
// its cluster holds them.
var (
	privateV4 = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"}
	privateV6 = []string{"fc00::/7", "fe80::/10"}
)

// wallSpec is what one node's rules are made of.
type wallSpec struct {
	// allow are the cluster's own addresses: its nodes, pod and Service
	// subnets.
	allow []netip.Prefix
	// dns are the node's name servers, reachable on port 53 only.
	dns []netip.Addr
	// deny are the addresses refused: privateV4, privateV6 and the
	// networks the nodes are on.
	deny []netip.Prefix
}

// wall puts the wall up in every node of cluster name (see above).
func (p *Provider) wall(ctx context.Context, e *engine, name string, cfg *v1alpha4.Cluster) error {
	ns, err := e.kind.ListNodes(kindName(name))
	if err != nil {
		return fmt.Errorf("list the nodes of %q: %w", kindName(name), err)
	}
	if len(ns) == 0 {
		return fmt.Errorf("cluster %q has no nodes", name)
	}
	var spec wallSpec
	for _, n := range ns {
		addrs, err := e.nodeAddresses(ctx, n.String())
		if err != nil {
			return err
		}
		for _, a := range addrs {
			spec.allow = append(spec.allow, netip.PrefixFrom(a.Addr(), a.Addr().BitLen()))
			spec.deny = append(spec.deny, a.Masked())
		}
	}
	defaulted := cfg.DeepCopy()
	v1alpha4.SetDefaultsCluster(defaulted)
	for _, s := range []string{defaulted.Networking.PodSubnet, defaulted.Networking.ServiceSubnet} {
		for _, part := range strings.Split(s, ",") {
			pre, err := netip.ParsePrefix(strings.TrimSpace(part))
			if err != nil {
				return fmt.Errorf("the cluster's subnet %q: %w", part, err)
			}
			spec.allow = append(spec.allow, pre.Masked())
		}
	}
	for _, s := range slices.Concat(privateV4, privateV6) {
		spec.deny = append(spec.deny, netip.MustParsePrefix(s))
	}
	for _, n := range ns {
		var out strings.Builder
		cmd := n.CommandContext(ctx, "cat", "/etc/resolv.conf")
		cmd.SetStdout(&out)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("read %s's /etc/resolv.conf: %w", n, err)
		}
		s := spec
		s.dns = nameservers(out.String())
		if err := runScript(ctx, n, s.script()); err != nil {
			return fmt.Errorf("wall node %s off: %w", n, err)
		}
	}
	return nil
}

// nodeAddresses are the addresses, with their networks' lengths, of node
// container c on the engine's networks.
func (e *engine) nodeAddresses(ctx context.Context, c string) ([]netip.Prefix, error) {
	out, err := exec.CommandContext(ctx, e.bin, "inspect", "--type", "container", "--format",
		`{{range .NetworkSettings.Networks}}{{.IPAddress}}/{{.IPPrefixLen}} {{.GlobalIPv6Address}}/{{.GlobalIPv6PrefixLen}} {{end}}`, c).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s inspect %s: %w: %s", e.bin, c, err, strings.TrimSpace(string(out)))
	}
	var addrs []netip.Prefix
	for _, f := range strings.Fields(string(out)) {
		if p, err := netip.ParsePrefix(f); err == nil {
			addrs = append(addrs, p)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("node %s has no address on the engine's networks", c)
	}
	return addrs, nil
}

// nameservers reads the name servers of a resolv.conf.
func nameservers(conf string) []netip.Addr {
	var addrs []netip.Addr
	for _, line := range strings.Split(conf, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			if a, err := netip.ParseAddr(f[1]); err == nil {
				addrs = append(addrs, a.WithZone(""))
			}
		}
	}
	return addrs
}

// script is the shell script that (re)makes the node's chain and puts it
// first in OUTPUT and FORWARD, for IPv4 and, where the node has IPv6, for
// IPv6. IPv6's refusals are of TCP and UDP only: its neighbours are found
// with ICMPv6 to link-local addresses.
func (s wallSpec) script() string {
	var b strings.Builder
	b.WriteString("set -e\n")
	family := func(cmd string, is4 bool) {
		fmt.Fprintf(&b, "%[1]s -w -N %[2]s 2>/dev/null || %[1]s -w -F %[2]s\n", cmd, wallChain)
		fmt.Fprintf(&b, "%s -w -A %s -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN\n", cmd, wallChain)
		for _, a := range s.allow {
			if a.Addr().Is4() == is4 {
				fmt.Fprintf(&b, "%s -w -A %s -d %s -j RETURN\n", cmd, wallChain, a)
			}
		}
		for _, a := range s.dns {
			if a.Is4() == is4 {
				for _, proto := range []string{"udp", "tcp"} {
					fmt.Fprintf(&b, "%s -w -A %s -d %s -p %s --dport 53 -j RETURN\n", cmd, wallChain, a, proto)
				}
			}
		}
		for _, a := range s.deny {
			if a.Addr().Is4() != is4 {
				continue
			}
			if is4 {
				fmt.Fprintf(&b, "%s -w -A %s -d %s -j REJECT\n", cmd, wallChain, a)
				continue
			}
			for _, proto := range []string{"udp", "tcp"} {
				fmt.Fprintf(&b, "%s -w -A %s -d %s -p %s -j REJECT\n", cmd, wallChain, a, proto)
			}
		}
		for _, chain := range []string{"OUTPUT", "FORWARD"} {
			fmt.Fprintf(&b, "while %[1]s -w -D %[2]s -j %[3]s 2>/dev/null; do :; done\n%[1]s -w -I %[2]s 1 -j %[3]s\n", cmd, chain, wallChain)
		}
	}
	family("iptables", true)
	b.WriteString("if [ -e /proc/net/if_inet6 ]; then\n")
	family("ip6tables", false)
	b.WriteString("fi\n")
	return b.String()
}

// runScript runs a shell script in node n, its output in the error.
func runScript(ctx context.Context, n nodes.Node, script string) error {
	var out strings.Builder
	cmd := n.CommandContext(ctx, "sh", "-c", script)
	cmd.SetStdout(&out)
	cmd.SetStderr(&out)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}
