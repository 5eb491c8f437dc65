package shell

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
)

// Options say where a Shell connects.
type Options struct {
	Host               string // HOST:PORT
	Username, Password string
	Keyspace           string
	Timeout            time.Duration
}

// Shell runs statements on one gateway and prints what they return.
type Shell struct {
	opts Options
	sess *gocql.Session
	Out  io.Writer
}

// Connect opens a session to the gateway.
func Connect(opts Options, out io.Writer) (*Shell, error) {
	s := &Shell{opts: opts, Out: out}
	if err := s.connect(opts.Keyspace); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Shell) connect(keyspace string) error {
	host, port, err := net.SplitHostPort(s.opts.Host)
	if err != nil {
		host, port = s.opts.Host, "9042"
	}
	cc := gocql.NewCluster(host)
	if cc.Port, err = strconv.Atoi(port); err != nil {
		return fmt.Errorf("bad port in %q", s.opts.Host)
	}
	cc.Keyspace = keyspace
	cc.Timeout = s.opts.Timeout
	cc.ConnectTimeout = s.opts.Timeout
	cc.DisableInitialHostLookup = true
	cc.NumConns = 1
	cc.Consistency = gocql.One
	if s.opts.Username != "" {
		cc.Authenticator = gocql.PasswordAuthenticator{Username: s.opts.Username, Password: s.opts.Password}
	}
	sess, err := cc.CreateSession()
	if err != nil {
		return err
	}
	if s.sess != nil {
		s.sess.Close()
	}
	s.sess = sess
	return nil
}

// Close closes the session.
func (s *Shell) Close() {
	if s.sess != nil {
		s.sess.Close()
	}
}

// Run runs one statement and prints its result.
func (s *Shell) Run(ctx context.Context, stmt string) error {
	words := strings.Fields(strings.ToLower(stmt))
	if len(words) == 0 {
		return nil
	}
	if words[0] == "use" && len(words) == 2 {
		// The driver keeps a pool of connections and refuses USE
		// without sending it: a keyspace is a session setting, so USE
		// opens a session in it, which fails when it does not exist.
		ks := strings.Fields(stmt)[1]
		if strings.HasPrefix(ks, `"`) {
			ks = strings.ReplaceAll(strings.Trim(ks, `"`), `""`, `"`)
		} else {
			ks = strings.ToLower(ks)
		}
		return s.connect(ks)
	}
	iter := s.sess.Query(stmt).WithContext(ctx).Iter()
	cols := iter.Columns()
	if len(cols) == 0 {
		return iter.Close()
	}
	names := make([]string, len(cols))
	types := make([]*pgschema.Type, len(cols))
	width := 0
	for i, c := range cols {
		names[i] = c.Name
		types[i] = typeOf(c.TypeInfo)
		if tt, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			width += len(tt.Elems)
		} else {
			width++
		}
	}
	cells := make([]rawCell, width)
	dest := make([]any, width)
	for i := range cells {
		dest[i] = &cells[i]
	}
	describe := words[0] == "describe" || words[0] == "desc"
	style := cqltext.Table
	if describe {
		style = cqltext.Exact // statements print as they are
	}
	var rows [][]string
	for iter.Scan(dest...) {
		row := make([]string, len(cols))
		j := 0
		for i, c := range cols {
			var v []byte
			if tt, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
				elems := make([][]byte, len(tt.Elems))
				null := true
				for k := range tt.Elems {
					elems[k] = cells[j+k].copy()
					null = null && elems[k] == nil
				}
				if !null {
					v = pgschema.SerializeTuple(elems)
				}
				j += len(tt.Elems)
			} else {
				v = cells[j].copy()
				j++
			}
			row[i] = display(style, types[i], v)
		}
		rows = append(rows, row)
	}
	if err := iter.Close(); err != nil {
		return err
	}
	if describe {
		writeDescribe(s.Out, names, rows)
		return nil
	}
	WriteTable(s.Out, names, rows)
	return nil
}

// rawCell receives a value's bytes from the driver.
type rawCell struct {
	v    []byte
	null bool
}

func (c *rawCell) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	c.v, c.null = append(c.v[:0], data...), data == nil
	return nil
}

func (c *rawCell) copy() []byte {
	if c.null {
		return nil
	}
	return append([]byte{}, c.v...)
}

// display is a value as cqlsh shows it in a table: null for null.
func display(style cqltext.Style, t *pgschema.Type, v []byte) string {
	if v == nil {
		return "null"
	}
	if t == nil {
		return "0x" + hex.EncodeToString(v)
	}
	s, err := style.Format(t, v)
	if err != nil {
		return "0x" + hex.EncodeToString(v)
	}
	return s
}

// writeDescribe prints a DESCRIBE result as cqlsh does: the statements
// of schema elements, the names of a listing, or the cluster's details.
func writeDescribe(w io.Writer, names []string, rows [][]string) {
	col := map[string]int{}
	for i, n := range names {
		col[n] = i
	}
	var b strings.Builder
	b.WriteString("\n")
	switch {
	case hasColumn(col, "create_statement"):
		for _, r := range rows {
			b.WriteString(r[col["create_statement"]] + "\n\n")
		}
	case hasColumn(col, "cluster"):
		r := rows[0]
		fmt.Fprintf(&b, "Cluster: %s\nPartitioner: %s\nSnitch: %s\n\n", r[col["cluster"]], r[col["partitioner"]], r[col["snitch"]])
	case hasColumn(col, "name"):
		var order []string
		groups := map[string][]string{}
		for _, r := range rows {
			ks, name := r[col["keyspace_name"]], r[col["name"]]
			if r[col["type"]] == "keyspace" {
				ks = ""
			}
			if _, ok := groups[ks]; !ok {
				order = append(order, ks)
			}
			groups[ks] = append(groups[ks], name)
		}
		for _, ks := range order {
			if len(order) > 1 && ks != "" {
				fmt.Fprintf(&b, "Keyspace %s\n%s\n", ks, strings.Repeat("-", len("Keyspace ")+len(ks)))
			}
			b.WriteString(strings.Join(groups[ks], "  ") + "\n\n")
		}
	default:
		WriteTable(w, names, rows)
		return
	}
	io.WriteString(w, b.String())
}

func hasColumn(col map[string]int, name string) bool {
	_, ok := col[name]
	return ok
}

// errorKinds are the names cqlsh gives errors from the server, by code:
// the Python driver's class and the code's description.
var errorKinds = map[int][2]string{
	0x0000: {"ServerError", "Server error"},
	0x000A: {"ProtocolException", "Protocol error"},
	0x0100: {"AuthenticationFailed", "Bad credentials"},
	0x1000: {"Unavailable", "Unavailable exception"},
	0x1001: {"OverloadedErrorMessage", "Coordinator node overloaded"},
	0x1002: {"IsBootstrappingErrorMessage", "Coordinator node is bootstrapping"},
	0x1003: {"TruncateError", "Error during truncate"},
	0x1100: {"WriteTimeout", "Coordinator node timed out waiting for replica nodes' responses"},
	0x1200: {"ReadTimeout", "Coordinator node timed out waiting for replica nodes' responses"},
	0x1300: {"ReadFailure", "Replica(s) failed to execute read"},
	0x1400: {"FunctionFailure", "User Defined Function failure"},
	0x1500: {"WriteFailure", "Replica(s) failed to execute write"},
	0x2000: {"SyntaxException", "Syntax error in CQL query"},
	0x2100: {"Unauthorized", "Unauthorized"},
	0x2200: {"InvalidRequest", "Invalid query"},
	0x2300: {"ConfigurationException", "Query invalid because of configuration issue"},
	0x2400: {"AlreadyExists", "Already exists"},
	0x2500: {"PreparedQueryNotFound", "Query not prepared"},
}

// FormatError writes an error as cqlsh prints it.
func FormatError(err error) string {
	var re gocql.RequestError
	if errors.As(err, &re) {
		k, ok := errorKinds[re.Code()]
		if !ok {
			k = [2]string{"ServerError", "Unknown"}
		}
		return fmt.Sprintf(`%s: Error from server: code=%04x [%s] message="%s"`, k[0], re.Code(), k[1], re.Message())
	}
	return err.Error()
}
