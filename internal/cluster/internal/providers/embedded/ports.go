package embedded

import (
	"fmt"
	"net"
	"strconv"
)

// freePorts asks the kernel for n distinct free loopback ports. Another
// process may take one before the component binds it; the component then
// fails its health check, and the error names it.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", loopback+":0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
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
	}
	return pt, nil
}
