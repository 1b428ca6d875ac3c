package yamldoc

import (
	"errors"
	"fmt"
)

// Error is a problem in a data file, located by file, line and field path.
type Error struct {
	File string // file name as given to Parse
	Line int    // 1-based; 0 when unknown
	Path string // field path such as exercises[0].goals[1].kind; may be empty
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// AsErrors returns every *Error in errs (including wrapped ones).
func AsErrors(errs []error) []*Error {
	var out []*Error
	for _, err := range errs {
		var e *Error
		if errors.As(err, &e) {
			out = append(out, e)
		}
	}
	return out
}
