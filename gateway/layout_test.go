package gateway_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers ranks every package of the module: a package imports only
// packages of lower rank, so imports point one way, down. A new package
// gets its rank here, deliberately. Test files are not checked: tests
// may reach anything, such as sharding/localpg to start PostgreSQL.
var layers = map[string]int{
	"migrations":                 0,
	"sharding":                   0,
	"sharding/localpg":           1,
	"sharding/shellquote":        0,
	"pgschema":                   1,
	"pgschema/cqltext":           2,
	"translate/cqlfunc":          2,
	"translate/udf":              2,
	"translate":                  3,
	"gateway/cqlwire":            4,
	"gateway/histories":          0,
	"gateway/certs":              0,
	"gateway/certs/certstest":    0,
	"gateway/cluster":            3,
	"gateway/repair":             4,
	"gateway/advise":             4,
	"gateway/webui":              5,
	"gateway/auth":               5,
	"gateway/origin":             5,
	"gateway/exec":               6,
	"gateway":                    7,
	"cmd/cqlpg/internal/bulk":    7,
	"cmd/cqlpg/internal/shell":   7,
	"cmd/cqlpg/internal/migrate": 8,
	"cmd/cqlpg":                  9,
}

// onlyFrom names packages only some others may import: localpg starts
// PostgreSQL servers, which only the command does; certstest makes
// certificates for tests, which no package imports.
var onlyFrom = map[string][]string{
	"sharding/localpg":        {"cmd/cqlpg"},
	"gateway/certs/certstest": {},
}

// TestLayering reads the imports of every package of the module and
// checks them against layers and onlyFrom.
func TestLayering(t *testing.T) {
	const module = "github.com/cqlpg/cqlpg/"
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		rank, ok := layers[pkg]
		if !ok {
			if !seen[pkg] {
				t.Errorf("package %s has no rank in layers", pkg)
			}
			seen[pkg] = true
			return nil
		}
		seen[pkg] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			dep, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module)
			if !ok {
				continue
			}
			if r, ok := layers[dep]; ok && r >= rank {
				t.Errorf("%s (rank %d) imports %s (rank %d): imports point down", rel+"/"+filepath.Base(path), rank, dep, r)
			}
			if allowed, ok := onlyFrom[dep]; ok && !slices.Contains(allowed, pkg) {
				t.Errorf("%s imports %s, which only %v may", rel+"/"+filepath.Base(path), dep, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("layers ranks %s, which has no source", pkg)
		}
	}
}
