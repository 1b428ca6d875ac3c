package oplog

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// Read calls emit with every whole line of a CRI log in r, partial records
// joined. A partial line at the end (the writer not done with it) is left
// out.
func Read(r io.Reader, emit func(Line) error) error {
	var j Joiner
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		raw, err := br.ReadString('\n')
		if err == io.EOF {
			// Text without its newline is a line still being written.
			return nil
		}
		if err != nil {
			return fmt.Errorf("read operator log: %w", err)
		}
		if l, ok := j.Add(raw[:len(raw)-1]); ok {
			if err := emit(l); err != nil {
				return err
			}
		}
	}
}

// ReadFile is Read on the file at path; the error wraps os.ErrNotExist when
// there is no such file.
func ReadFile(path string, emit func(Line) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("operator log: %w", err)
	}
	defer f.Close()
	return Read(f, emit)
}
