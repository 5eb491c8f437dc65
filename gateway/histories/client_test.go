package histories

import (
	"errors"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

// client is one logical client: it runs one operation at a time on one
// gateway's session and records it. After an operation whose outcome is
// unknown it goes on as a new process.
type client struct {
	h       *History
	gw      int
	sess    *gocql.Session
	process int
}

func newClient(h *History, gw int, sess *gocql.Session) *client {
	return &client{h: h, gw: gw, sess: sess, process: h.NewProcess()}
}

// infoPause is how long a client waits after an operation of unknown
// outcome.
const infoPause = 500 * time.Millisecond

// do records the invocation inv, runs op, and records how it ended: op
// returns the completion's outputs and its error, which classify judges.
func (c *client) do(inv Event, op func() (Event, error)) Event {
	inv.Process, inv.Type, inv.Gateway = c.process, Invoke, c.gw
	c.h.Add(inv)
	end, err := op()
	end.Process, end.F, end.Gateway, end.Key = c.process, inv.F, c.gw, inv.Key
	if err != nil {
		end.Type, end.Error = classify(err, inv.F == FRead), err.Error()
		if errors.As(err, new(*gocql.RequestErrUnavailable)) {
			end.Error = unavailablePrefix + end.Error
		}
	} else if end.Type == "" {
		end.Type = OK
	}
	end = c.h.Add(end)
	if end.Type == Info {
		c.process = c.h.NewProcess()
		// Every info operation may take effect at any time from its
		// invocation on, which the register's check pays for with
		// time exponential in their overlap: a client that met one
		// lets the fault pass a little before it tries again.
		time.Sleep(infoPause)
	}
	return end
}

// classify tells what an error says of an operation's effect. A read that
// did not return observed nothing and changed nothing: it fails. A write
// fails only when it surely had no effect: Unavailable, answered before
// any replica is asked, no connection to send it on, or a refusal of the
// statement. Any other error (a timeout, a lost connection, the client's
// deadline, a server error) leaves its outcome unknown.
func classify(err error, read bool) Type {
	if read {
		return Fail
	}
	var unavailable *gocql.RequestErrUnavailable
	var req gocql.RequestError
	switch {
	case errors.As(err, &unavailable), errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrSessionClosed):
		return Fail
	case errors.As(err, &req) && (req.Code() == gocql.ErrCodeInvalid || req.Code() == gocql.ErrCodeSyntax):
		return Fail
	}
	return Info
}

// unavailablePrefix starts the error of an operation answered
// Unavailable.
const unavailablePrefix = "unavailable: "

// unavailable reports whether an operation was answered Unavailable.
func unavailable(e Event) bool { return strings.HasPrefix(e.Error, unavailablePrefix) }
