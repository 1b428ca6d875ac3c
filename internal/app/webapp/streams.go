package webapp

import (
	"context"
	"fmt"
	"strings"

	"oplab.dev/oplab/internal/clusterview"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/stream"
)

// Subscribe joins a session's live stream ("log" or "cluster") after the
// client's last frame. The cluster view's frames are whole snapshots, so a
// new viewer starts from the newest.
func (w *Web) Subscribe(ctx context.Context, id, name, epoch string, after uint64) (<-chan server.Frame, error) {
	from := stream.From{Epoch: epoch, Seq: after}
	switch name {
	case "log":
	case "cluster":
		from.Newest = after == 0
	default:
		return nil, classified{fmt.Errorf("no stream %q", name), server.ErrNotFound}
	}
	sub, err := w.hub.Subscribe(name+"/"+id, from)
	if err != nil {
		return nil, webErr(err)
	}
	out := make(chan server.Frame)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			f, err := sub.Next(ctx)
			if err != nil {
				return
			}
			sf := server.Frame{Seq: f.Seq, Type: f.Type, Epoch: f.Epoch, Skipped: f.Skipped}
			if len(f.Data) > 0 {
				sf.Data = f.Data
			}
			select {
			case out <- sf:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// open maps a hub key to its upstream: the operator's log of the
// session's cluster, or the watches of the lab's PostgresCluster.
func (w *Web) open(key string) (stream.Upstream, error) {
	name, id, ok := strings.Cut(key, "/")
	if !ok {
		return nil, fmt.Errorf("stream key %q: want <stream>/<session>", key)
	}
	ctx := context.Background()
	st, err := w.a.Sessions.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	if !st.ClusterLive || st.Cluster == "" {
		return nil, fmt.Errorf("session %s: %w", id, session.ErrNoCluster)
	}
	switch name {
	case "log":
		src, err := w.a.OperatorLog(ctx, id)
		if err != nil {
			return nil, err
		}
		return stream.UpstreamFunc(oplog.FollowJSON(src)), nil
	case "cluster":
		l, err := w.a.Course.Lab(st.Lab)
		if err != nil {
			return nil, err
		}
		cfg, err := w.a.Clusters.RESTConfig(st.Cluster)
		if err != nil {
			return nil, err
		}
		ns := l.Target.Namespace
		if ns == "" {
			ns = "default"
		}
		cv := &clusterview.Watcher{Config: cfg, Namespace: ns, Name: l.Target.Cluster, Logger: w.log}
		return stream.UpstreamFunc(cv.Run), nil
	}
	return nil, fmt.Errorf("no stream %q", name)
}
