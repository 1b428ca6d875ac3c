package oplog

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// parseJSON reads a JSON object line: slog's JSONHandler or zap's
// production encoder.
func parseJSON(s string, e *Entry) bool {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || d.More() {
		return false
	}
	kv := make(map[string]string, len(m))
	groups := map[string][2]string{}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			kv[k] = v
		case json.Number:
			kv[k] = v.String()
		case map[string]any:
			name, _ := v["name"].(string)
			ns, _ := v["namespace"].(string)
			if name != "" {
				groups[k] = [2]string{ns, name}
			}
			kv[k] = compact(v)
		case nil:
			kv[k] = ""
		default:
			kv[k] = compact(v)
		}
	}
	e.fill(kv, groups)
	return true
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// parseZapConsole reads zap's development (console) encoding: tab-separated
// time, level, logger name, message and a JSON object of the other fields.
func parseZapConsole(s string, e *Entry) bool {
	parts := strings.Split(s, "\t")
	if len(parts) < 3 {
		return false
	}
	t, ok := parseTime(parts[0])
	if !ok {
		if t, ok = parseZapTime(parts[0]); !ok {
			return false
		}
	}
	level := normLevel(parts[1])
	switch level {
	case LevelDebug, LevelInfo, LevelWarn, LevelError:
	default:
		return false
	}
	rest := parts[2:]
	if last := rest[len(rest)-1]; len(rest) > 1 && strings.HasPrefix(last, "{") {
		if !parseJSON(last, e) {
			return false
		}
		rest = rest[:len(rest)-1]
	}
	e.Time, e.Level, e.Message = t, level, rest[len(rest)-1]
	if len(rest) > 1 {
		if e.Fields == nil {
			e.Fields = map[string]string{}
		}
		e.Fields["logger"] = rest[0]
	}
	return true
}

// parseZapTime reads zap's ISO 8601 time, whose zone has no colon.
func parseZapTime(s string) (time.Time, bool) {
	t, err := time.Parse("2006-01-02T15:04:05.000Z0700", s)
	return t, err == nil
}

var klogHeader = regexp.MustCompile(`^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ ([^\]\s]+)\] ?(.*)$`)

func isKlog(s string) bool {
	return len(s) > 22 && strings.ContainsRune("IWEF", rune(s[0])) && s[1] >= '0' && s[1] <= '9'
}

// parseKlog reads a klog line ("E1130 22:50:57.123456   12345 file.go:12]
// message"), which client-go writes; its time has no year, taken from around
// (or now).
func parseKlog(s string, around time.Time, e *Entry) bool {
	m := klogHeader.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n := make([]int, 6)
	for i := range n {
		n[i], _ = strconv.Atoi(m[2+i])
	}
	us, _ := strconv.Atoi(m[7])
	if around.IsZero() {
		around = time.Now()
	}
	e.Time = time.Date(around.Year(), time.Month(n[0]), n[1], n[2], n[3], n[4], us*1000, time.Local)
	e.Level = map[string]string{"I": LevelInfo, "W": LevelWarn, "E": LevelError, "F": LevelError}[m[1]]
	e.Fields = map[string]string{"source": m[8]}
	msg := m[9]
	// Structured klog: a quoted message and key=value pairs.
	if q, err := strconv.QuotedPrefix(msg); err == nil {
		text, _ := strconv.Unquote(q)
		if kv, groups, ok := logfmt(strings.TrimSpace(msg[len(q):])); ok {
			e.fill(kv, groups)
			e.Fields["source"] = m[8]
			e.Message = text
			return true
		}
	}
	e.Message = msg
	return true
}

// parseLogfmt reads key=value lines: slog's TextHandler, the operator's
// own logger. A line is taken as one only with a msg key and a level or
// time key, so plain text with an = in it stays plain.
func parseLogfmt(s string, e *Entry) bool {
	kv, groups, ok := logfmt(s)
	if !ok {
		return false
	}
	if _, ok := kv["msg"]; !ok {
		return false
	}
	_, hasLevel := kv["level"]
	_, hasTime := kv["time"]
	if !hasLevel && !hasTime {
		return false
	}
	e.fill(kv, groups)
	return true
}

// logfmt splits s into its pairs; a value (or key) is bare up to a space,
// or Go-quoted as slog quotes it. Keys of a group ("PostgresCluster.name")
// also name an object of the line.
func logfmt(s string) (kv map[string]string, groups map[string][2]string, ok bool) {
	kv = map[string]string{}
	groups = map[string][2]string{}
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		key, rest, ok := logfmtToken(s, true)
		if !ok || !strings.HasPrefix(rest, "=") {
			return nil, nil, false
		}
		val, rest, ok := logfmtToken(rest[1:], false)
		if !ok || (rest != "" && rest[0] != ' ') {
			return nil, nil, false
		}
		kv[key] = val
		if g, field, found := strings.Cut(key, "."); found && (field == "name" || field == "namespace") {
			nn := groups[g]
			if field == "name" {
				nn[1] = val
			} else {
				nn[0] = val
			}
			groups[g] = nn
		}
		s = rest
	}
	return kv, groups, len(kv) > 0
}

func logfmtToken(s string, key bool) (tok, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", false
		}
		tok, err = strconv.Unquote(q)
		return tok, s[len(q):], err == nil
	}
	end := strings.IndexByte(s, ' ')
	if key {
		if eq := strings.IndexByte(s, '='); eq >= 0 && (end < 0 || eq < end) {
			end = eq
		}
	}
	if end < 0 {
		end = len(s)
	}
	if key && end == 0 {
		return "", "", false
	}
	return s[:end], s[end:], true
}

func parseFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
