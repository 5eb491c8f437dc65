package gateway_test

import (
	"bufio"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"
)

// seedStep is one statement of testdata/seeds.cql, with the output a
// SELECT must print, or a request for a fresh session.
type seedStep struct {
	line       int
	stmt       string
	want       []string
	newSession bool
}

// readSeeds parses testdata/seeds.cql.
func readSeeds(t *testing.T) []seedStep {
	f, err := os.Open("testdata/seeds.cql")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		steps []seedStep
		cur   []string
		start int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case len(cur) == 0 && trimmed == "-- new session":
			steps = append(steps, seedStep{line: n, newSession: true})
			continue
		case len(cur) == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--")):
			continue
		}
		if len(cur) == 0 {
			start = n
		}
		cur = append(cur, line)
		if !strings.HasSuffix(trimmed, ";") {
			continue
		}
		step := seedStep{line: start, stmt: strings.Join(cur, "\n")}
		cur = nil
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(step.stmt)), "SELECT") {
			for sc.Scan() {
				n++
				if strings.TrimSpace(sc.Text()) == "" {
					break
				}
				step.want = append(step.want, strings.TrimRight(sc.Text(), " "))
			}
		}
		steps = append(steps, step)
	}
	return steps
}

var useStatement = regexp.MustCompile(`(?i)^\s*USE\s+(\w+)\s*;\s*$`)

// TestSeeds runs every CQL example of the seed documents through unmodified
// gocql and compares each SELECT's output, formatted as cqlsh prints it,
// with the output the documents print.
func TestSeeds(t *testing.T) {
	steps := readSeeds(t)
	if len(steps) < 30 {
		t.Fatalf("read only %d steps from testdata/seeds.cql", len(steps))
	}
	sess := session(t, "")
	for _, step := range steps {
		switch m := useStatement.FindStringSubmatch(step.stmt); {
		case step.newSession:
			sess = session(t, "")
			continue
		case m != nil:
			// gocql refuses USE; a session bound to the keyspace sends
			// USE on each of its connections instead.
			sess = session(t, m[1])
			continue
		}
		if step.want == nil {
			if err := sess.Query(step.stmt).Exec(); err != nil {
				t.Fatalf("line %d: %s: %v", step.line, step.stmt, err)
			}
			continue
		}
		got, err := cqlshTable(sess.Query(step.stmt).Iter())
		if err != nil {
			t.Fatalf("line %d: %s: %v", step.line, step.stmt, err)
		}
		if strings.Join(got, "\n") != strings.Join(step.want, "\n") {
			t.Errorf("line %d: %s\n got:\n%s\nwant:\n%s", step.line, step.stmt,
				strings.Join(got, "\n"), strings.Join(step.want, "\n"))
		}
	}
}

// cqlshTable renders a result as cqlsh does: headers left-aligned, values
// right-aligned, each column as wide as its widest cell.
func cqlshTable(iter *gocql.Iter) ([]string, error) {
	cols := iter.Columns()
	var rows [][]string
	for {
		row := map[string]any{}
		if !iter.MapScan(row) {
			break
		}
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = cqlshValue(row[c.Name])
		}
		rows = append(rows, cells)
	}
	if err := iter.Close(); err != nil {
		return nil, err
	}
	widths := make([]int, len(cols))
	header := make([]string, len(cols))
	rule := make([]string, len(cols))
	for i, c := range cols {
		widths[i] = len(c.Name)
		for _, r := range rows {
			widths[i] = max(widths[i], len(r[i]))
		}
		header[i] = fmt.Sprintf("%-*s", widths[i], c.Name)
		rule[i] = strings.Repeat("-", widths[i]+2)
	}
	out := []string{strings.TrimRight(" "+strings.Join(header, " | "), " "), strings.Join(rule, "+")}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = fmt.Sprintf("%*s", widths[i], v)
		}
		out = append(out, " "+strings.Join(cells, " | "))
	}
	return out, nil
}

// cqlshValue formats a value as cqlsh does.
func cqlshValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case gocql.UUID:
		return x.String()
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000000-0700")
	case []byte:
		return fmt.Sprintf("0x%x", x)
	case *big.Int:
		return x.String()
	case *inf.Dec:
		return x.String()
	case []string:
		sort.Strings(x)
		return "{" + strings.Join(x, ", ") + "}"
	}
	return fmt.Sprint(v)
}
