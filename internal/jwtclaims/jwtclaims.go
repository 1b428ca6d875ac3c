// Package jwtclaims reads the lifetime of a ServiceAccount token (a JWT)
// that oplab minted and keeps: when it was issued and when it expires, to
// renew it in time. The token is not verified; the API server does that.
package jwtclaims

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Times returns the iat (issued at) and exp (expires) claims of token.
func Times(token string) (issued, expires time.Time, err error) {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return issued, expires, errors.New("the token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return issued, expires, fmt.Errorf("decode the token's claims: %w", err)
	}
	var claims struct {
		IssuedAt  int64 `json:"iat"`
		ExpiresAt int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return issued, expires, fmt.Errorf("decode the token's claims: %w", err)
	}
	if claims.IssuedAt == 0 || claims.ExpiresAt <= claims.IssuedAt {
		return issued, expires, errors.New("the token has no valid iat and exp claims")
	}
	return time.Unix(claims.IssuedAt, 0), time.Unix(claims.ExpiresAt, 0), nil
}
