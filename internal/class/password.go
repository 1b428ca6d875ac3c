package class

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters: RFC 9106's second recommended option (64 MiB,
// 3 passes), with the parallelism of a small server. Verify reads the
// parameters from each hash, so raising these later keeps old hashes
// valid.
const (
	argonTime    = 3
	argonMemory  = 64 * 1024 // KiB
	argonThreads = 2
	argonSaltLen = 16
	argonKeyLen  = 32
)

// Password length bounds.
const (
	MinPasswordLen = 10
	maxPasswordLen = 1024
)

var errBadHash = errors.New("malformed password hash")

// hashPassword returns password's argon2id hash in the PHC string format
// ($argon2id$v=19$m=...,t=...,p=...$salt$hash).
func hashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// checkPassword reports whether password matches encoded, a hash from
// hashPassword, comparing in constant time.
func checkPassword(encoded, password string) (bool, error) {
	p, salt, key, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.time, p.memory, p.threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

type argonParams struct {
	memory, time uint32
	threads      uint8
}

// parseHash reads a PHC argon2id string, refusing parameters no hash of
// ours has (a tampered store must not make Verify allocate gigabytes).
func parseHash(encoded string) (argonParams, []byte, []byte, error) {
	var p argonParams
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, nil, nil, errBadHash
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return p, nil, nil, fmt.Errorf("%w: version %q", errBadHash, parts[2])
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return p, nil, nil, fmt.Errorf("%w: parameters %q", errBadHash, parts[3])
	}
	if p.memory < 8*1024 || p.memory > 1024*1024 || p.time < 1 || p.time > 16 || p.threads < 1 {
		return p, nil, nil, fmt.Errorf("%w: parameters out of range %q", errBadHash, parts[3])
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return p, nil, nil, fmt.Errorf("%w: salt", errBadHash)
	}
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, fmt.Errorf("%w: key", errBadHash)
	}
	return p, salt, key, nil
}
