package webapp

import (
	"context"

	"oplab.dev/oplab/internal/frame"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/stream"
)

// Subscribe joins a session's live stream ("log" or "cluster") after the
// client's last frame, or its last cursor when it comes from another
// server. The cluster view's frames are whole snapshots, so a new viewer
// starts from the newest.
func (w *Web) Subscribe(ctx context.Context, id, name string, from server.Resume) (<-chan frame.Frame, error) {
	sub, err := w.rt.Subscribe(id, name, fromResume(from))
	if err != nil {
		return nil, webErr(err)
	}
	return relay(ctx, sub), nil
}

// fromResume is where a client's stream starts on the hub.
func fromResume(r server.Resume) stream.From {
	return stream.From{Epoch: r.Epoch, Seq: r.After, Cursor: r.Cursor}
}

// relay hands sub's frames, as the hub keeps them (a data frame with its
// JSON made once), to the server's writer, until ctx ends or the
// subscription does; then it closes the channel and the subscription. The
// channel holds no frame: the frames a client has not taken stay in the
// hub's ring, which drops a subscriber too far behind, and a client that
// stops reading is dropped when the server's write to it times out.
func relay(ctx context.Context, sub *stream.Subscription) <-chan frame.Frame {
	out := make(chan frame.Frame)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			f, err := sub.Next(ctx)
			if err != nil {
				return
			}
			select {
			case out <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
