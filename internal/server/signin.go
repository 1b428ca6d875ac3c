package server

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// signInTokenTTL is how long a sign-in link works if nobody uses it.
const signInTokenTTL = 24 * time.Hour

// SignInURL mints a one-time sign-in token and returns the link that uses
// it on base (http://127.0.0.1:8080), as Jupyter prints one at start-up.
func (s *Server) SignInURL(base string) string {
	tok := randomToken(24)
	s.mu.Lock()
	s.tokens[tok] = time.Now().Add(signInTokenTTL)
	s.mu.Unlock()
	return strings.TrimSuffix(base, "/") + "/login?token=" + url.QueryEscape(tok)
}

// useToken consumes a sign-in token; it reports whether it was valid.
func (s *Server) useToken(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	ok := false
	for t, exp := range s.tokens {
		if now.After(exp) {
			delete(s.tokens, t)
			continue
		}
		// Every token is compared, in constant time, so timing tells
		// nothing of which ones exist.
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			delete(s.tokens, t)
			ok = true
		}
	}
	return ok
}

// login exchanges a sign-in token for a session cookie.
func (s *Server) login(c *gin.Context) {
	tok := c.Query("token")
	if tok == "" || !s.useToken(tok) {
		s.render(c, http.StatusUnauthorized, "signin.html", map[string]any{"Used": tok != ""})
		return
	}
	if err := s.signInAs(c, s.cfg.Learner); err != nil {
		s.fail(c, err)
		return
	}
	s.log.Info("signed in", "learner", s.cfg.Learner)
	c.Redirect(http.StatusSeeOther, "/")
}

func (s *Server) logout(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	c.Redirect(http.StatusSeeOther, "/")
}

// setLang remembers the learner's language and goes back to the page.
func (s *Server) setLang(c *gin.Context) {
	l := c.PostForm("lang")
	if !slices.Contains(langs, l) {
		c.JSON(http.StatusBadRequest, gin.H{"error": "unknown language " + l})
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: langCookie, Value: l, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: 365 * 24 * 3600})
	c.Redirect(http.StatusSeeOther, localPath(c.PostForm("next")))
}

// localPath returns p when it is a path on this server, else "/": a
// redirect never leaves the site.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return p
}
