package pods

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// tunnel is a port forward to a cell's API port from a fixed port on
// 127.0.0.1, as `kubectl port-forward` makes one. When the pod is replaced
// the forward is lost; the tunnel dials the new pod on the same local port,
// so a kubeconfig naming it stays good.
type tunnel struct {
	addr string
	stop chan struct{}
	done chan struct{}
}

// tunnelTo returns the local address of the cluster's tunnel, starting it
// when this process has none.
func (p *Provider) tunnelTo(name string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.tunnels[name]; ok {
		return t.addr, nil
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	t := &tunnel{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), stop: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan struct{})
	go p.runTunnel(name, port, t, ready)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		// The loop goes on trying; a connection made meanwhile waits.
		p.opts.Logger.Warn("port forward not ready yet", "cluster", name, "addr", t.addr)
	}
	p.tunnels[name] = t
	return t.addr, nil
}

// runTunnel forwards until t.stop closes, dialling again after each loss.
func (p *Provider) runTunnel(name string, port int, t *tunnel, ready chan struct{}) {
	defer close(t.done)
	var once sync.Once
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		readyNow := make(chan struct{})
		go func() {
			select {
			case <-readyNow:
				once.Do(func() { close(ready) })
			case <-t.stop:
			}
		}()
		err := p.forward(name, port, t.stop, readyNow)
		select {
		case <-t.stop:
			return
		default:
		}
		if errors.Is(err, portforward.ErrLostConnectionToPod) {
			backoff = 100 * time.Millisecond
		}
		p.opts.Logger.Debug("port forward ended, dialling again", "cluster", name, "err", err)
		select {
		case <-t.stop:
			return
		case <-time.After(backoff):
		}
	}
}

// forward runs one port forward to the cell's pod until it is lost or stop
// closes.
func (p *Provider) forward(name string, port int, stop chan struct{}, ready chan struct{}) error {
	transport, upgrader, err := spdy.RoundTripperFor(p.opts.Config)
	if err != nil {
		return err
	}
	req := p.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(p.opts.Namespace).
		Name(podName(name)).SubResource("portforward")
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, req.URL())
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"},
		[]string{fmt.Sprintf("%d:%d", port, apiPort)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return err
	}
	return pf.ForwardPorts()
}

func (p *Provider) closeTunnel(name string) {
	p.mu.Lock()
	t, ok := p.tunnels[name]
	delete(p.tunnels, name)
	delete(p.written, name)
	p.mu.Unlock()
	if ok {
		close(t.stop)
		<-t.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
