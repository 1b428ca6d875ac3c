package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// keyFile holds the key that signs session cookies, so that a restarted
// server keeps its learners signed in.
const keyFile = "server.key"

// loadKey reads the signing key from dir, making one (0600) when there is
// none. A key file others can read is refused: with it anyone could sign
// a cookie.
func loadKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, keyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("make cookie key: %w", err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("make cookie key: %w", err)
		}
		if err := os.WriteFile(path, key, 0o600); err != nil {
			return nil, fmt.Errorf("make cookie key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cookie key: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read cookie key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("cookie key %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("cookie key %s is too short (%d bytes, want 32)", path, len(key))
	}
	return key, nil
}

// identity is what the session cookie carries: who the caller is, the
// sign-in it belongs to, and the token that state-changing requests must
// repeat in a header. The cookie alone admits nobody: the application
// layer's record of its sign-in must still hold (see authenticate).
type identity struct {
	Learner string `json:"l"`
	// Role is roleLearner or roleInstructor. An instructor's Learner is
	// instructorPrefix and their name, which no learner has, so the
	// learner's pages show them nothing of anyone's.
	Role string `json:"r"`
	// Instructor is the signed-in instructor's name.
	Instructor string `json:"i,omitempty"`
	// Admin is never read from the cookie: authenticate sets it from the
	// sign-in's record on each request.
	Admin bool `json:"-"`
	// SignIn is the secret naming the sign-in's record.
	SignIn  string `json:"s"`
	CSRF    string `json:"c"`
	Expires int64  `json:"e"`
}

const (
	roleLearner      = "learner"
	roleInstructor   = "instructor"
	instructorPrefix = "instructor:"
)

// signer signs and verifies cookie values: base64(payload).base64(mac),
// the mac taken over the cookie's name and the payload so a value cannot
// be moved to another cookie.
type signer struct{ key []byte }

func (s signer) mac(name, payload string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(payload))
	return h.Sum(nil)
}

func (s signer) encode(name string, id identity) (string, error) { return s.encodeValue(name, id) }

// encodeValue signs v, as JSON, for the cookie called name.
func (s signer) encodeValue(name string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode cookie: %w", err)
	}
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + base64.RawURLEncoding.EncodeToString(s.mac(name, p)), nil
}

var errBadCookie = errors.New("invalid session cookie")

func (s signer) decode(name, value string, now time.Time) (identity, error) {
	var id identity
	if err := s.decodeValue(name, value, &id); err != nil {
		return id, err
	}
	if id.Learner == "" || id.CSRF == "" || id.SignIn == "" {
		return id, errBadCookie
	}
	if now.Unix() > id.Expires {
		return id, fmt.Errorf("%w: expired", errBadCookie)
	}
	return id, nil
}

// decodeValue checks the signature of a value encodeValue made for the
// cookie called name and reads it into v.
func (s signer) decodeValue(name, value string, v any) error {
	p, m, ok := strings.Cut(value, ".")
	if !ok {
		return errBadCookie
	}
	got, err := base64.RawURLEncoding.DecodeString(m)
	if err != nil || !hmac.Equal(got, s.mac(name, p)) {
		return errBadCookie
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || json.Unmarshal(b, v) != nil {
		return errBadCookie
	}
	return nil
}

// randomToken returns n random bytes, URL-safe encoded.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on the systems Go supports.
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
