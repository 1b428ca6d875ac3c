package webapp

import (
	"context"

	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/stream"
)

// Subscribe joins a session's live stream ("log" or "cluster") after the
// client's last frame, or its last cursor when it comes from another
// server. The cluster view's frames are whole snapshots, so a new viewer
// starts from the newest.
func (w *Web) Subscribe(ctx context.Context, id, name string, from server.Resume) (<-chan server.Frame, error) {
	sub, err := w.rt.Subscribe(id, name, stream.From{Epoch: from.Epoch, Seq: from.After, Cursor: from.Cursor})
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
			sf := server.Frame{Seq: f.Seq, Type: f.Type, Epoch: f.Epoch, Skipped: f.Skipped, Cursor: f.Cursor, Resumed: f.Resumed}
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
