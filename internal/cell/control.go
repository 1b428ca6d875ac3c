package cell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// The control socket takes one request a connection: a JSON line, with a
// listener's file descriptor attached for a forward, answered by a JSON
// line.
type controlRequest struct {
	Op string `json:"op"`
	// Name groups forwards, so that those of a process can be closed
	// together when it stops.
	Name string `json:"name,omitempty"`
	Port int    `json:"port,omitempty"`
}

type controlReply struct {
	Error string `json:"error,omitempty"`
}

const (
	opPing    = "ping"
	opForward = "forward"
	opClose   = "close"
)

// Forward makes the cell of dir forward port on the host's loopback to the
// same port on the cell's, under name. The host listener is opened here:
// a port already taken on the host fails at once.
func Forward(ctx context.Context, dir, name string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer f.Close()
	return request(ctx, dir, controlRequest{Op: opForward, Name: name, Port: port}, f)
}

// CloseForwards stops the forwards of the cell of dir made under name.
func CloseForwards(ctx context.Context, dir, name string) error {
	return request(ctx, dir, controlRequest{Op: opClose, Name: name}, nil)
}

// request sends req (with file, if any) to the cell of dir.
func request(ctx context.Context, dir string, req controlRequest, file *os.File) error {
	// A socket's path may not be longer than about 100 bytes, and a
	// cluster's directory can be deep: the socket is reached through a
	// descriptor of its directory, whose /proc path is short.
	sockDir, err := os.Open(filepath.Dir(controlPath(dir)))
	if err != nil {
		return err
	}
	defer sockDir.Close()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", fmt.Sprintf("/proc/self/fd/%d/%s", sockDir.Fd(), filepath.Base(controlPath(dir))))
	if err != nil {
		return err
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var oob []byte
	if file != nil {
		oob = syscall.UnixRights(int(file.Fd()))
	}
	if _, _, err := conn.WriteMsgUnix(append(b, '\n'), oob, nil); err != nil {
		return fmt.Errorf("cell control: %w", err)
	}
	var rep controlReply
	if err := json.NewDecoder(conn).Decode(&rep); err != nil {
		return fmt.Errorf("cell control: %w", err)
	}
	if rep.Error != "" {
		return fmt.Errorf("cell: %s", rep.Error)
	}
	return nil
}

// readRequest reads one request and the file descriptor that came with it.
func readRequest(conn *net.UnixConn) (controlRequest, *os.File, error) {
	var req controlRequest
	buf := make([]byte, 4096)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return req, nil, err
	}
	var file *os.File
	if oobn > 0 {
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return req, nil, err
		}
		for _, m := range msgs {
			fds, err := syscall.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for i, fd := range fds {
				if i == 0 && file == nil {
					file = os.NewFile(uintptr(fd), "forward")
				} else {
					syscall.Close(fd) // one file a request
				}
			}
		}
	}
	if err := json.Unmarshal(bytes.TrimSpace(buf[:n]), &req); err != nil {
		if file != nil {
			file.Close()
		}
		return req, nil, errors.New("malformed request")
	}
	return req, file, nil
}
