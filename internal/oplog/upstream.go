package oplog

import (
	"context"
	"encoding/json"
	"fmt"
)

// RunJSON follows the log as Run does and emits each line parsed as an
// Entry, in JSON, with its Cursor: the shape of a stream.Upstream, so a hub can fan the log
// out to every viewer.
func (f *Follower) RunJSON(ctx context.Context, emit func(data []byte, cursor string)) error {
	return f.Run(ctx, func(l Line) error {
		b, err := json.Marshal(ParseEntry(l))
		if err != nil {
			return fmt.Errorf("encode operator log line: %w", err)
		}
		emit(b, Cursor(l))
		return nil
	})
}
