package server

import (
	"crypto/hmac"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// joinCookie holds the random value the join forms' CSRF token is derived
// from (a signed double-submit: the form carries the value's MAC), so the
// forms are protected before their visitor has a session.
const joinCookie = "oplab_join"

// joinView is what the join page shows: a form (to join, or to rejoin),
// with what the learner typed and why it was refused; or, once joined,
// the member and their rejoin code.
type joinView struct {
	Rejoin bool
	Code   string
	Name   string
	Error  string
	// Token is the forms' CSRF token.
	Token  string
	Member *Member
}

// joinPage shows the form to join a class (?rejoin=1: to rejoin one).
func (s *Server) joinPage(c *gin.Context) {
	s.renderJoin(c, http.StatusOK, joinView{Rejoin: c.Query("rejoin") != ""})
}

// join puts the caller in a class and signs them in as its new member;
// the page then shows their rejoin code, once.
func (s *Server) join(c *gin.Context) {
	v := joinView{Code: c.PostForm("code"), Name: c.PostForm("name")}
	if !s.joinFormOK(c) {
		s.renderJoin(c, http.StatusForbidden, v.refused(s.cat.text(pageLang(c.Request), "join.expired")))
		return
	}
	m, err := s.cfg.Learning.Join(c.Request.Context(), c.RemoteIP(), v.Code, v.Name)
	if err != nil {
		s.joinFailed(c, v, err)
		return
	}
	if err := s.signInAs(c, m.Learner); err != nil {
		s.fail(c, err)
		return
	}
	s.log.Info("learner joined a class", "learner", m.Learner)
	s.renderJoin(c, http.StatusOK, joinView{Member: m})
}

// rejoin signs a member back in with their personal rejoin code.
func (s *Server) rejoin(c *gin.Context) {
	v := joinView{Rejoin: true}
	if !s.joinFormOK(c) {
		s.renderJoin(c, http.StatusForbidden, v.refused(s.cat.text(pageLang(c.Request), "join.expired")))
		return
	}
	m, err := s.cfg.Learning.Rejoin(c.Request.Context(), c.RemoteIP(), c.PostForm("rejoin"))
	if err != nil {
		s.joinFailed(c, v, err)
		return
	}
	if err := s.signInAs(c, m.Learner); err != nil {
		s.fail(c, err)
		return
	}
	s.log.Info("learner rejoined a class", "learner", m.Learner)
	c.Redirect(http.StatusSeeOther, "/")
}

func (v joinView) refused(msg string) joinView { v.Error = msg; return v }

// joinFailed shows the form again with why it was refused, in the
// page's language; an unexpected error is logged and not detailed.
func (s *Server) joinFailed(c *gin.Context, v joinView, err error) {
	code := status(err)
	if code == http.StatusInternalServerError {
		s.log.Error("join failed", "err", err)
		s.renderJoin(c, code, v.refused(s.cat.text(pageLang(c.Request), "error.title")))
		return
	}
	retryAfter(c, err)
	s.renderJoin(c, code, v.refused(s.message(pageLang(c.Request), err)))
}

// renderJoin renders the join page with a form token, setting the join
// cookie it is derived from when the caller has none.
func (s *Server) renderJoin(c *gin.Context, code int, v joinView) {
	if v.Member == nil {
		v.Token = s.joinToken(c)
	}
	s.render(c, code, "join.html", v)
}

// joinToken returns the join forms' CSRF token for the caller's join
// cookie, setting a fresh cookie when there is none.
func (s *Server) joinToken(c *gin.Context) string {
	val := ""
	if ck, err := c.Request.Cookie(joinCookie); err == nil && len(ck.Value) >= 32 {
		val = ck.Value
	} else {
		val = randomToken(24)
		http.SetCookie(c.Writer, &http.Cookie{Name: joinCookie, Value: val, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: s.secure(c.Request), MaxAge: int((24 * time.Hour).Seconds())})
	}
	return base64.RawURLEncoding.EncodeToString(s.signer.mac(joinCookie, val))
}

// joinFormOK reports whether a join form was posted from this server's
// page: same origin, and its token matches the caller's join cookie.
func (s *Server) joinFormOK(c *gin.Context) bool {
	ck, err := c.Request.Cookie(joinCookie)
	if err != nil || !sameOrigin(c.Request) {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(c.PostForm(csrfField))
	return err == nil && hmac.Equal(got, s.signer.mac(joinCookie, ck.Value))
}

// signInAs records a sign-in of learner and gives the caller its session
// cookie, making the identity the request's, so the page rendered next
// has its CSRF token.
func (s *Server) signInAs(c *gin.Context, learner string) error {
	si, err := s.cfg.SignIns.SignInLearner(c.Request.Context(), learner)
	if err != nil {
		return err
	}
	return s.signIn(c, identity{Learner: learner, Role: roleLearner}, si)
}

// signIn gives the caller a session cookie for id naming sign-in si, with
// a fresh CSRF token, expiring with si (or SessionTTL, when sooner).
func (s *Server) signIn(c *gin.Context, id identity, si *SignIn) error {
	expires := time.Now().Add(s.cfg.SessionTTL)
	if !si.Expires.IsZero() && si.Expires.Before(expires) {
		expires = si.Expires
	}
	id.SignIn, id.Admin = si.ID, si.Admin
	id.CSRF, id.Expires = randomToken(24), expires.Unix()
	v, err := s.signer.encode(sessionCookie, id)
	if err != nil {
		return err
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secure(c.Request), MaxAge: int(time.Until(expires).Seconds())})
	c.Set(ctxIdentity, id)
	return nil
}
