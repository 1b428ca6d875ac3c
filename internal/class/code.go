package class

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strings"
)

// alphabet holds no 0/O, 1/I/L or U/V pairs, so a code read off a
// projector is typed right; 29 symbols give about 4.86 bits each.
const alphabet = "23456789ABCDEFGHJKMNPQRSTWXYZ"

// Code lengths: a join code has about 48 bits, a personal rejoin code
// about 58.
const (
	joinCodeLen   = 10
	rejoinCodeLen = 12
)

// newCode returns n symbols of alphabet from crypto/rand.
func newCode(n int) string {
	max := big.NewInt(int64(len(alphabet)))
	b := make([]byte, n)
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			// crypto/rand does not fail on supported platforms.
			panic(err)
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// FormatCode groups a code in fives (or fours) with dashes, for reading;
// normalizeCode undoes it.
func FormatCode(code string) string {
	b := normalizeCode(code)
	n := len(b)
	group := 5
	if n%5 != 0 {
		group = 4
	}
	var out strings.Builder
	for i := 0; i < n; i += group {
		if i > 0 {
			out.WriteByte('-')
		}
		out.WriteString(b[i:min(i+group, n)])
	}
	return out.String()
}

// normalizeCode makes a typed code comparable: upper case, without the
// dashes and spaces people type or leave out.
func normalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, code)
}

// hashRejoin is how a rejoin code is kept. The code is random and long, so
// a fast hash is enough (a slow KDF protects guessable secrets), and it
// lets the store find the member by the hash.
func hashRejoin(code string) string {
	sum := sha256.Sum256([]byte("oplab rejoin\x00" + normalizeCode(code)))
	return hex.EncodeToString(sum[:])
}

// newID returns a random identifier with a prefix.
func newID(prefix string) string {
	return prefix + strings.ToLower(newCode(16))
}
