package webapp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oplab.dev/oplab/internal/frame"
	"oplab.dev/oplab/internal/operator/crilog"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/stream"
)

// BenchmarkLogLineTo100Clients measures a reconcile line's way to the
// browsers: appended to the operator's log file in the CRI format (as
// hostpod writes it), read by the oplog follower (woken by inotify), fanned
// out by the hub, handed over by relay, written by the server's stream
// handler and WebSocket writer (the path `oplab serve` runs, signed in,
// Origin checked), and received by 100 WebSocket clients over loopback.
// Per line, the time until the last of the 100 has it; p50 and p99 over
// all lines of the run.
//
//	go test -run '^$' -bench LogLineTo100Clients -benchtime 1x -count 5 ./internal/app/webapp/
func BenchmarkLogLineTo100Clients(b *testing.B) {
	const (
		clients      = 100
		linesPerIter = 200
		pace         = 5 * time.Millisecond // between lines: an operator busy reconciling
	)
	loc := oplog.Location{Dir: b.TempDir()}
	file, err := os.OpenFile(loc.Log(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	w := crilog.NewWriter(file, "stderr")

	hub := stream.New(func(string) (stream.Upstream, error) {
		return stream.UpstreamFunc((&oplog.Follower{Path: loc.Log()}).RunJSON), nil
	}, stream.Options{})
	defer hub.Close()
	site := newStreamSite(b, hub)

	total := b.N * linesPerIter
	var (
		written  = make([]atomic.Int64, total+1) // unix ns, by seq
		arrivals = make([]atomic.Int32, total+1)
		complete = make([]atomic.Int64, total+1)
		left     atomic.Int64
	)
	left.Store(int64(total))
	allDone := make(chan struct{})
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	var wg sync.WaitGroup
	ready := make(chan struct{}, clients)
	for range clients {
		c := site.dial(b, ctx, "log", nil)
		wg.Go(func() {
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				seq, typ := frameHead(msg)
				if typ == frame.TypeHello {
					ready <- struct{}{}
					continue
				}
				if typ != frame.TypeData || seq < 1 || seq > total {
					continue
				}
				if arrivals[seq].Add(1) == clients {
					complete[seq].Store(time.Now().UnixNano())
					if left.Add(-1) == 0 {
						close(allDone)
					}
				}
			}
		})
	}
	for range clients {
		<-ready
	}

	seq := 0
	b.ResetTimer()
	for b.Loop() {
		for range linesPerIter {
			seq++
			line := fmt.Sprintf(`time=%s level=INFO msg="changed the cluster" controller=postgrescluster namespace=default name=db reconcileID=%08d did="relabelled db-1 primary" took=1.2ms`+"\n",
				time.Now().UTC().Format(time.RFC3339Nano), seq)
			written[seq].Store(time.Now().UnixNano())
			if _, err := w.Write([]byte(line)); err != nil {
				b.Fatal(err)
			}
			time.Sleep(pace)
		}
	}
	select {
	case <-allDone:
	case <-time.After(30 * time.Second):
		b.Fatalf("%d of %d lines never reached all %d clients", left.Load(), total, clients)
	}
	b.StopTimer()
	lat := make([]float64, 0, total)
	for i := 1; i <= total; i++ {
		lat = append(lat, float64(complete[i].Load()-written[i].Load())/1e6)
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "ms-p50")
	b.ReportMetric(lat[(len(lat)*99+99)/100-1], "ms-p99")
	b.ReportMetric(0, "ns/op") // the line latencies are the figure, not the loop's time
	// Ending the hub's streams closes every connection (the server's
	// writer closes it when its frames end), which ends the clients'
	// readers.
	hub.Close()
	wg.Wait()
}

// frameHead reads a frame's seq and type from the start of its JSON (as
// frame.Frame writes it), so that the 100 clients, which share the machine with
// the server here but would be browsers elsewhere, cost little.
func frameHead(msg []byte) (seq int, typ string) {
	rest, ok := bytes.CutPrefix(msg, []byte(`{"seq":`))
	if !ok {
		return 0, ""
	}
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return 0, ""
	}
	seq, _ = strconv.Atoi(string(rest[:i]))
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"type":"`))
	if !ok {
		return 0, ""
	}
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		typ = string(rest[:j])
	}
	return seq, typ
}
