package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/quiz"
)

func (s *Server) apiRoutes(g *gin.RouterGroup) {
	g.GET("/labs", s.apiCatalogue)
	g.POST("/labs/:lab/start", s.apiStart)
	g.GET("/events", s.apiEvents)

	ss := g.Group("/sessions/:id", s.requireOwned)
	ss.GET("", s.apiStatus)
	ss.GET("/timeline", s.apiTimeline)
	ss.GET("/debrief", s.apiDebrief)
	ss.POST("/chaos", s.apiChaos)
	ss.POST("/check", s.apiCheck)
	ss.POST("/hint", s.apiHint)
	ss.POST("/reset", s.apiReset)
	ss.POST("/stop", s.apiStop)
	ss.GET("/quiz", s.apiQuiz)
	ss.POST("/quiz", s.apiAnswer)
	ss.POST("/console", s.apiConsole)
	ss.GET("/complete", s.apiComplete)
	ss.POST("/apply", s.apiApply)
	ss.GET("/module", s.apiModule)
	ss.POST("/build", s.apiBuild)
	ss.POST("/format", s.apiFormat)
	// A class's instructor watches a member's streams too.
	g.GET("/sessions/:id/streams/:stream", s.requireViewable, s.apiStream)
}

const ctxSession = "oplab.session"

// requireOwned lets a request on a session through only for its owner;
// anyone else gets the 404 of a session that does not exist.
func (s *Server) requireOwned(c *gin.Context) {
	ref, ok := s.owned(c)
	if !ok {
		c.AbortWithStatusJSON(http.StatusNotFound, gin.H{"error": fmt.Sprintf("no session %q", c.Param("id"))})
		return
	}
	c.Set(ctxSession, ref)
	c.Next()
}

func session(c *gin.Context) *SessionRef { v, _ := c.Get(ctxSession); return v.(*SessionRef) }

// readJSON decodes the request body into v; an empty body leaves v as is.
func readJSON(c *gin.Context, v any) error {
	err := json.NewDecoder(c.Request.Body).Decode(v)
	var mb *http.MaxBytesError
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &mb):
		return err
	}
	return fmt.Errorf("read request: %v: %w", err, ErrInvalid)
}

// detached returns a context for work the learner started and should not
// lose by closing the tab: it outlives the request, not the server.
func (s *Server) detached(c *gin.Context) (context.Context, func()) {
	req := c.Request.Context()
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(req), requestKey{}, req))
	stop := context.AfterFunc(s.ctx, cancel)
	s.wg.Add(1)
	return ctx, func() { stop(); cancel(); s.wg.Done() }
}

type requestKey struct{}

// Request returns the context of the request a detached context was made
// for, which ends when the caller goes away (a learner who leaves the page
// while their start waits for room leaves the queue); ctx itself when it
// was not detached.
func Request(ctx context.Context) context.Context {
	if req, ok := ctx.Value(requestKey{}).(context.Context); ok {
		return req
	}
	return ctx
}

// progress sends a long operation's steps to the caller's open pages.
func (s *Server) progress(c *gin.Context, session string) func(Update) {
	learner := caller(c).Learner
	return func(u Update) {
		if u.Session == "" {
			u.Session = session
		}
		s.events.publish(learner, u)
	}
}

func (s *Server) reply(c *gin.Context, v any, err error) {
	if err != nil {
		s.failJSON(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) apiCatalogue(c *gin.Context) {
	labs, err := s.cfg.Learning.Catalogue(c.Request.Context(), caller(c).Learner, pageLang(c.Request))
	s.reply(c, labs, err)
}

func (s *Server) apiStart(c *gin.Context) {
	ctx, done := s.detached(c)
	defer done()
	v, err := s.cfg.Learning.Start(ctx, caller(c).Learner, c.Param("lab"), pageLang(c.Request), s.progress(c, ""))
	s.reply(c, v, err)
}

// apiStatus answers the learner's page with their session, woken first
// if it slept: the page asks when it opens.
func (s *Server) apiStatus(c *gin.Context) {
	id := session(c).ID
	v, err := s.cfg.Learning.Wake(c.Request.Context(), id, s.progress(c, id))
	s.reply(c, v, err)
}

func (s *Server) apiTimeline(c *gin.Context) { s.timelinePage(c, session(c).ID) }

// timelinePage answers a request for a page of session id's timeline:
// ?after=<seq>&limit=<n>, both optional. A page holds at most limit events
// (the application bounds it); a full page may have more after it, which
// the page asks for next, after its last seq.
func (s *Server) timelinePage(c *gin.Context, id string) {
	after, limit, err := pageQuery(c)
	if err != nil {
		s.failJSON(c, err)
		return
	}
	v, _, err := s.cfg.Learning.Timeline(c.Request.Context(), id, after, limit)
	if v == nil {
		v = []Update{}
	}
	s.reply(c, v, err)
}

// pageQuery reads a timeline page's ?after= and ?limit=; either may be
// left out (0).
func pageQuery(c *gin.Context) (after int64, limit int, err error) {
	if after, err = queryCount(c, "after"); err != nil {
		return 0, 0, err
	}
	n, err := queryCount(c, "limit")
	return after, int(min(n, math.MaxInt32)), err
}

// queryCount reads ?name= as a whole number, 0 or more; 0 when absent.
func queryCount(c *gin.Context, name string) (int64, error) {
	v := c.Query(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("?%s=%q: give a whole number, 0 or more: %w", name, v, ErrInvalid)
	}
	return n, nil
}

func (s *Server) apiChaos(c *gin.Context) {
	var in struct {
		Exercise string `json:"exercise"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	ctx, done := s.detached(c)
	defer done()
	id := session(c).ID
	v, err := s.cfg.Learning.Chaos(ctx, id, in.Exercise, s.progress(c, id))
	s.reply(c, v, err)
}

func (s *Server) apiCheck(c *gin.Context) {
	id := session(c).ID
	v, err := s.cfg.Learning.Check(c.Request.Context(), id, s.progress(c, id))
	s.reply(c, v, err)
}

func (s *Server) apiHint(c *gin.Context) {
	v, err := s.cfg.Learning.Hint(c.Request.Context(), session(c).ID)
	s.reply(c, v, err)
}

func (s *Server) apiReset(c *gin.Context) {
	ctx, done := s.detached(c)
	defer done()
	id := session(c).ID
	v, err := s.cfg.Learning.Reset(ctx, id, s.progress(c, id))
	s.reply(c, v, err)
}

func (s *Server) apiStop(c *gin.Context) {
	ctx, done := s.detached(c)
	defer done()
	id := session(c).ID
	v, err := s.cfg.Learning.Stop(ctx, id, s.progress(c, id))
	s.reply(c, v, err)
}

func (s *Server) apiQuiz(c *gin.Context) {
	v, err := s.cfg.Learning.Quiz(c.Request.Context(), session(c).ID)
	s.reply(c, v, err)
}

func (s *Server) apiAnswer(c *gin.Context) {
	var in struct {
		Answers quiz.Answers `json:"answers"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Learning.Answer(c.Request.Context(), session(c).ID, in.Answers)
	s.reply(c, v, err)
}

// eventsPoll is how often the events stream reads the session's timeline,
// so that what the CLI did to the session shows on the page.
const eventsPoll = 500 * time.Millisecond

// apiEvents streams to a page the progress of the caller's operations and,
// for ?session=ID (the caller's), that session's timeline after ?after=.
func (s *Server) apiEvents(c *gin.Context) {
	learner := caller(c).Learner
	id := c.Query("session")
	if id != "" {
		if _, ok := s.ownedBy(c, id); !ok {
			c.JSON(http.StatusNotFound, gin.H{"error": fmt.Sprintf("no session %q", id)})
			return
		}
	}
	after, _ := strconv.ParseInt(c.Query("after"), 10, 64)
	updates, unsubscribe := s.events.subscribe(learner)
	defer unsubscribe()
	ctx, done := s.streamCtx(c)
	defer done()
	defer s.cfg.Metrics.WebSocketOpened(metrics.StreamTimeline)()
	s.wsEnded(c.Request, serveJSON(ctx, c.Writer, c.Request, s.ws, func(ctx context.Context, out chan<- any) {
		tick := time.NewTicker(eventsPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case u := <-updates:
				if !send(ctx, out, u) {
					return
				}
			case <-tick.C:
				if id == "" {
					continue
				}
				// A page at a time: what the page has not seen yet may be
				// a long history.
				for more := true; more; {
					var evs []Update
					var err error
					evs, more, err = s.cfg.Learning.Timeline(ctx, id, after, 0)
					if err != nil {
						s.log.Warn("read timeline", "session", id, "err", err)
						break
					}
					for _, ev := range evs {
						after = max(after, ev.Seq)
						if !send(ctx, out, ev) {
							return
						}
					}
				}
			}
		}
	}))
}

// streamCtx is the context of a long-lived stream: the request's, ended
// too when the server closes.
func (s *Server) streamCtx(c *gin.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(c.Request.Context())
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}
