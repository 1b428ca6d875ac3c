package room

import "time"

// history keeps what the estimates are made of: how long the last starts
// took and when clusters last freed up.
type history struct {
	began    time.Time       // when the live count was first observed
	live     int             // the live count last observed
	starts   []time.Duration // the last starts' durations
	frees    []time.Time     // when clusters freed up, oldest first
	observed bool
}

// keep is how many starts and frees the estimates remember.
const keep = 32

func (h *history) started(d time.Duration) {
	h.starts = append(h.starts, d)
	if len(h.starts) > keep {
		h.starts = h.starts[1:]
	}
}

// observe notes the live count at now: a drop means clusters freed up.
func (h *history) observe(live int, now time.Time) {
	if !h.observed {
		h.observed, h.live, h.began = true, live, now
		return
	}
	for range h.live - live {
		h.frees = append(h.frees, now)
	}
	if len(h.frees) > keep {
		h.frees = h.frees[len(h.frees)-keep:]
	}
	h.live = live
}

func (h *history) startMean() time.Duration {
	if len(h.starts) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range h.starts {
		sum += d
	}
	return sum / time.Duration(len(h.starts))
}

// freeEvery is the mean time between clusters freeing up, over the time
// they were watched (since the first remembered free when older ones were
// forgotten); 0 when none freed up yet.
func (h *history) freeEvery(now time.Time) time.Duration {
	if len(h.frees) == 0 {
		return 0
	}
	from := h.began
	if len(h.frees) == keep {
		from = h.frees[0]
	}
	return now.Sub(from) / time.Duration(len(h.frees))
}

// estimate is about how long the start at position pos waits and then
// takes: pos clusters must free up, one each freeEvery, and then its own
// start takes the mean start's time. 0 when nothing freed up yet.
func (h *history) estimate(pos int, now time.Time) time.Duration {
	every := h.freeEvery(now)
	if every == 0 {
		return 0
	}
	return time.Duration(pos)*every + h.startMean()
}
