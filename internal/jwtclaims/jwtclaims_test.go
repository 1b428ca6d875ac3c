package jwtclaims

import (
	"encoding/base64"
	"testing"
	"time"
)

func TestTimes(t *testing.T) {
	enc := func(claims string) string {
		return "e30." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".sig"
	}
	iat, exp, err := Times(enc(`{"iat": 1000, "exp": 4600}`) + "\n")
	if err != nil || !iat.Equal(time.Unix(1000, 0)) || !exp.Equal(time.Unix(4600, 0)) {
		t.Errorf("got %v, %v, %v; want 1000 and 4600", iat, exp, err)
	}
	for _, bad := range []string{"", "a.b", enc(`{"exp": 5}`), enc(`{"iat": 9, "exp": 5}`), "a.!!!.c", enc(`not json`)} {
		if _, _, err := Times(bad); err == nil {
			t.Errorf("Times(%q): got no error", bad)
		}
	}
}
