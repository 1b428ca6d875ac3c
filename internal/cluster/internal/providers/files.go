package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ShareTree is the walk of a Workshop's Share: it makes dst, inside the
// workspace ws, a tree of src's directories (of mode dirMode) and regular
// files, each put there by put (a hard link or a copy); links and devices
// are left out. The tree is made beside dst and renamed, so that dst is
// whole or absent; dst must not exist.
func ShareTree(ctx context.Context, ws, src, dst string, dirMode os.FileMode, put func(path, to string) error) error {
	if rel, err := filepath.Rel(ws, dst); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("share %s: %s is not in the cluster's workspace", src, dst)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("share %s: %s exists", src, dst)
	}
	tmp := dst + ".new"
	if err := os.RemoveAll(tmp); err != nil { // left by a share cut off
		return err
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(to, dirMode)
		case !d.Type().IsRegular():
			return nil // a link or a device is no file to share
		default:
			return put(path, to)
		}
	})
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("share %s: %w", src, err)
	}
	return os.Rename(tmp, dst)
}

// CopyFile copies src to dst, a new file of the given mode, leaving holes
// where src has blocks of zeros: a seed's write-ahead log is a 64 MB file
// of which etcd wrote a few hundred KiB, and etcd allocates the rest itself
// (fallocate) when it opens the copy, faster than writing zeros.
func CopyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	size, err := copySparse(out, in)
	if err == nil {
		err = out.Truncate(size) // the length of a trailing hole
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// copySparse copies in to out block by block, seeking over blocks of
// zeros, and returns the length copied.
func copySparse(out io.WriteSeeker, in io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := io.ReadFull(in, buf)
		if m > 0 {
			block := buf[:m]
			if isZero(block) {
				_, serr := out.Seek(int64(m), io.SeekCurrent)
				err = cmp.Or(serr, err)
			} else if _, werr := out.Write(block); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return n, nil
		case err != nil:
			return n, err
		}
	}
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
