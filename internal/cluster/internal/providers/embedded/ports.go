package embedded

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Ports are picked below the kernel's ephemeral range, where no outgoing
// connection takes them between the pick and the component's bind. (A
// port from bind(":0") is itself ephemeral: under load, some connection
// often took it before the component started, and the start failed.)
const (
	portLow  = 10000
	portHigh = 32767 // below the usual ephemeral range 32768-60999
)

// freePorts returns n distinct loopback ports that are free now, outside
// the ephemeral range and not held.
func freePorts(n int, held map[int]string) ([]int, error) {
	low, high := portLow, portHigh
	if eLow, _, ok := ephemeralRange(); ok && eLow-1 < high {
		high = eLow - 1
	}
	if high-low < 100*n {
		return nil, fmt.Errorf("no room for ports below the ephemeral range (%d-%d)", low, high)
	}
	seen := map[int]bool{}
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("no free loopback port found in %d-%d", low, high)
		}
		p := low + rand.IntN(high-low+1)
		if seen[p] {
			continue
		}
		seen[p] = true
		if _, ok := held[p]; !ok && checkPortFree(p) == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// ephemeralRange reads the kernel's range for outgoing connections.
func ephemeralRange() (low, high int, ok bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0, 0, false
	}
	low, err1 := strconv.Atoi(f[0])
	high, err2 := strconv.Atoi(f[1])
	return low, high, err1 == nil && err2 == nil
}

// checkPortFree fails when port is taken on loopback.
func checkPortFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d on %s is in use: %w", port, loopback, err)
	}
	return l.Close()
}

// allocatePorts picks the cluster's ports, none of them held by another
// cluster (heldPorts); apiServer pins the API server's port when not zero.
func allocatePorts(apiServer int, held map[int]string) (ports, error) {
	if apiServer != 0 {
		if other, ok := held[apiServer]; ok {
			return ports{}, fmt.Errorf("port %d is cluster %q's, which starts again on it", apiServer, other)
		}
		if err := checkPortFree(apiServer); err != nil {
			return ports{}, err
		}
	}
	p, err := freePorts(6, held)
	if err != nil {
		return ports{}, err
	}
	pt := ports{EtcdClient: p[0], EtcdPeer: p[1], APIServer: p[2], ControllerManager: p[3], Scheduler: p[4], Kwok: p[5]}
	if apiServer != 0 {
		pt.APIServer = apiServer
		if pt.hasDuplicate() {
			return allocatePorts(apiServer, held)
		}
	}
	return pt, nil
}

// all are the cluster's ports.
func (p ports) all() []int {
	return []int{p.EtcdClient, p.EtcdPeer, p.APIServer, p.ControllerManager, p.Scheduler, p.Kwok}
}

func (p ports) hasDuplicate() bool {
	seen := map[int]bool{}
	for _, x := range p.all() {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}

// newPorts picks a new cluster's ports (apiServer pins the API server's
// when not zero), none of them another cluster's.
func (p *Provider) newPorts(apiServer int) (ports, error) {
	held, err := p.heldPorts()
	if err != nil {
		return ports{}, err
	}
	return allocatePorts(apiServer, held)
}

// heldPorts returns the ports of every cluster under the data directory,
// each with its cluster's name: a stopped cluster (a session asleep) starts
// again on the very ports it had, and its cell as the user its API
// server's port names (cellUser), so no new cluster may take them while its
// directory is there. A port a stopped cluster held was free, and a new
// cluster picked it; the sleeper's wake then failed on it.
func (p *Provider) heldPorts() (map[int]string, error) {
	entries, err := os.ReadDir(filepath.Join(p.dataDir, "clusters"))
	if err != nil && !isNotExist(err) {
		return nil, err
	}
	held := map[int]string{}
	for _, e := range entries {
		if !e.IsDir() || checkName(e.Name()) != nil {
			continue
		}
		st, err := readState(p.clusterDir(e.Name()))
		if err != nil {
			continue // being made (its ports not written yet) or not a cluster
		}
		for _, port := range st.Ports.all() {
			if port != 0 {
				held[port] = e.Name()
			}
		}
	}
	return held, nil
}
