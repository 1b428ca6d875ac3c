package embedded

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
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

// freePorts returns n distinct loopback ports that are free now and outside
// the ephemeral range.
func freePorts(n int) ([]int, error) {
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
		if checkPortFree(p) == nil {
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

// allocatePorts picks the cluster's ports; apiServer pins the API server's
// port when not zero.
func allocatePorts(apiServer int) (ports, error) {
	if apiServer != 0 {
		if err := checkPortFree(apiServer); err != nil {
			return ports{}, err
		}
	}
	p, err := freePorts(6)
	if err != nil {
		return ports{}, err
	}
	pt := ports{EtcdClient: p[0], EtcdPeer: p[1], APIServer: p[2], ControllerManager: p[3], Scheduler: p[4], Kwok: p[5]}
	if apiServer != 0 {
		pt.APIServer = apiServer
		if pt.hasDuplicate() {
			return allocatePorts(apiServer)
		}
	}
	return pt, nil
}

func (p ports) hasDuplicate() bool {
	all := []int{p.EtcdClient, p.EtcdPeer, p.APIServer, p.ControllerManager, p.Scheduler, p.Kwok}
	seen := map[int]bool{}
	for _, x := range all {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}
