package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/metrics"
)

func (s *Server) cataloguePage(c *gin.Context) {
	labs, err := s.cfg.Learning.Catalogue(c.Request.Context(), caller(c).Learner, pageLang(c.Request))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "catalogue.html", map[string]any{"Labs": labs})
}

// labPage is the one screen a lab is done in: before a start, the lesson
// and a Start button; after, the live panels around the same lesson.
func (s *Server) labPage(c *gin.Context) {
	ctx := c.Request.Context()
	lv, err := s.cfg.Learning.Lab(ctx, c.Param("lab"), pageLang(c.Request))
	if err != nil {
		s.fail(c, err)
		return
	}
	current, err := s.cfg.Learning.LabSession(ctx, caller(c).Learner, lv.ID)
	if errors.Is(err, ErrNotFound) {
		current, err = nil, nil // never started: the page offers Start
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "lab.html", map[string]any{
		"Lab": lv, "Session": current,
		"Console": s.cfg.Console != nil, "Streams": s.cfg.Streams != nil,
	})
}

func (s *Server) summaryPage(c *gin.Context) {
	ref, ok := s.owned(c)
	if !ok {
		s.fail(c, fmt.Errorf("session %s: %w", c.Param("id"), ErrNotFound))
		return
	}
	sum, err := s.cfg.Learning.Summary(c.Request.Context(), ref.ID, pageLang(c.Request))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "summary.html", sum)
}

func (s *Server) quizPage(c *gin.Context) {
	ref, ok := s.owned(c)
	if !ok {
		s.fail(c, fmt.Errorf("session %s: %w", c.Param("id"), ErrNotFound))
		return
	}
	q, err := s.cfg.Learning.Quiz(c.Request.Context(), ref.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "quiz.html", map[string]any{"Session": ref, "Quiz": q})
}

// owned returns the session named by the :id parameter if the caller owns
// it. Another learner's session is reported exactly as a missing one, so
// that session ids cannot be probed.
func (s *Server) owned(c *gin.Context) (*SessionRef, bool) {
	return s.ownedBy(c, c.Param("id"))
}

// ownedBy returns session id if the caller owns it; another learner's
// session is counted as a refusal and reported as missing.
func (s *Server) ownedBy(c *gin.Context, id string) (*SessionRef, bool) {
	ref, err := s.cfg.Learning.Session(c.Request.Context(), id)
	if err != nil || ref == nil {
		return nil, false
	}
	if ref.Learner != caller(c).Learner {
		s.cfg.Metrics.Refused(metrics.RefusedForbidden)
		return nil, false
	}
	return ref, true
}
