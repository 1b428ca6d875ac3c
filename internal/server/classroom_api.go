package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/metrics"
)

// instructorRoutes are the instructor's pages and API: only a signed-in
// instructor reaches them; the application layer decides which classes.
func (s *Server) instructorRoutes(a *gin.RouterGroup) {
	p := a.Group("/instructor", s.requireInstructor)
	p.GET("", s.instructorPage)
	p.GET("/classes/:name", s.boardPage)
	p.GET("/classes/:name/sessions/:id", s.learnerPage)

	a.POST("/api/classes", s.requireInstructor, s.apiCreateClass)
	g := a.Group("/api/classes/:name", s.requireInstructor)
	g.POST("", s.apiEditClass)
	g.GET("/board", s.apiBoard)
	g.GET("/events", s.apiClassEvents)
	g.GET("/export.csv", s.apiExport)
	g.POST("/close", s.apiCloseClass)
	g.GET("/sessions/:id", s.apiClassSession)
	g.GET("/sessions/:id/timeline", s.apiClassTimeline)
	g.GET("/sessions/:id/debrief", s.apiClassDebrief)
	g.POST("/sessions/:id/reset", s.apiResetLearner)
	g.POST("/sessions/:id/end", s.apiEndLearner)
	g.POST("/sessions/:id/extend", s.apiExtendLearner)
}

func (s *Server) boardPage(c *gin.Context) {
	b, err := s.cfg.Classroom.Board(c.Request.Context(), instructor(c), c.Param("name"), pageLang(c.Request))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "board.html", map[string]any{"Instructor": instructor(c), "Board": b})
}

// learnerPage is a read-only view of a class member's session: its
// status, timeline and the live panels its learner sees.
func (s *Server) learnerPage(c *gin.Context) {
	ref, err := s.cfg.Classroom.ClassSession(c.Request.Context(), instructor(c), c.Param("name"), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "learner.html", map[string]any{"Class": c.Param("name"), "Session": ref,
		"Streams": s.cfg.Streams != nil})
}

func (s *Server) apiBoard(c *gin.Context) {
	b, err := s.cfg.Classroom.Board(c.Request.Context(), instructor(c), c.Param("name"), pageLang(c.Request))
	s.reply(c, b, err)
}

// apiClassEvents streams the events of the class's sessions to its
// board, which fetches the board again on each.
func (s *Server) apiClassEvents(c *gin.Context) {
	ctx, done := s.streamCtx(c)
	defer done()
	evs, err := s.cfg.Classroom.ClassEvents(ctx, instructor(c), c.Param("name"))
	if err != nil {
		s.failJSON(c, err)
		return
	}
	defer s.cfg.Metrics.WebSocketOpened(metrics.StreamTimeline)()
	s.wsEnded(c.Request, serveJSON(ctx, c.Writer, c.Request, s.ws, func(ctx context.Context, out chan<- any) {
		for ev := range evs {
			if !send(ctx, out, ev) {
				return
			}
		}
	}))
}

func (s *Server) apiExport(c *gin.Context) {
	var buf bytes.Buffer
	name := c.Param("name")
	if err := s.cfg.Classroom.Export(c.Request.Context(), instructor(c), name, &buf); err != nil {
		s.failJSON(c, err)
		return
	}
	// Class names are letters, digits, '.', '_' and '-': safe in the header.
	c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+".csv"))
	c.Data(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

func (s *Server) apiCloseClass(c *gin.Context) {
	err := s.cfg.Classroom.CloseClass(c.Request.Context(), instructor(c), c.Param("name"))
	s.reply(c, gin.H{"closed": true}, err)
}

func (s *Server) apiClassSession(c *gin.Context) {
	ref, err := s.cfg.Classroom.ClassSession(c.Request.Context(), instructor(c), c.Param("name"), c.Param("id"))
	if err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Learning.Status(c.Request.Context(), ref.ID)
	s.reply(c, v, err)
}

func (s *Server) apiClassTimeline(c *gin.Context) {
	ref, err := s.cfg.Classroom.ClassSession(c.Request.Context(), instructor(c), c.Param("name"), c.Param("id"))
	if err != nil {
		s.failJSON(c, err)
		return
	}
	s.timelinePage(c, ref.ID)
}

func (s *Server) apiResetLearner(c *gin.Context) {
	ctx, done := s.detached(c)
	defer done()
	v, err := s.cfg.Classroom.ResetLearner(ctx, instructor(c), c.Param("name"), c.Param("id"), nil)
	s.reply(c, v, err)
}

func (s *Server) apiEndLearner(c *gin.Context) {
	ctx, done := s.detached(c)
	defer done()
	v, err := s.cfg.Classroom.EndLearner(ctx, instructor(c), c.Param("name"), c.Param("id"), nil)
	s.reply(c, v, err)
}

// apiExtendLearner adds {"byMs": N} to a session's time limit.
func (s *Server) apiExtendLearner(c *gin.Context) {
	var in struct {
		By int64 `json:"byMs"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Classroom.ExtendLearner(c.Request.Context(), instructor(c), c.Param("name"), c.Param("id"), time.Duration(in.By)*time.Millisecond)
	s.reply(c, v, err)
}

// requireViewable lets a session's stream through for its owner, and for
// the instructor of its class named by ?class= (read-only: streams only
// send).
func (s *Server) requireViewable(c *gin.Context) {
	if id := caller(c); id.Role == roleInstructor {
		ref, err := s.cfg.Classroom.ClassSession(c.Request.Context(), instructor(c), c.Query("class"), c.Param("id"))
		if err != nil {
			s.cfg.Metrics.Refused(metrics.RefusedForbidden)
			c.AbortWithStatusJSON(http.StatusNotFound, gin.H{"error": fmt.Sprintf("no session %q", c.Param("id"))})
			return
		}
		c.Set(ctxSession, ref)
		c.Next()
		return
	}
	s.requireOwned(c)
}
