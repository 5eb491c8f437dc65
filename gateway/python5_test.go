package gateway_test

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// schema5Report is what schema5.py reports.
type schema5Report struct {
	CreateWarnings []string `json:"create_warnings"`
	View           struct {
		BaseTableName     string   `json:"base_table_name"`
		WhereClause       string   `json:"where_clause"`
		IncludeAllColumns bool     `json:"include_all_columns"`
		PartitionKey      []string `json:"partition_key"`
		ClusteringKey     []string `json:"clustering_key"`
		Columns           []string `json:"columns"`
		CQL               string   `json:"cql"`
		OnTable           []string `json:"on_table"`
		Tables            []string `json:"tables"`
	} `json:"view"`
	Functions []string `json:"functions"`
	Aggregate struct {
		Name             string   `json:"name"`
		ArgumentTypes    []string `json:"argument_types"`
		StateFunc        string   `json:"state_func"`
		StateType        string   `json:"state_type"`
		FinalFunc        string   `json:"final_func"`
		InitialCondition string   `json:"initial_condition"`
		ReturnType       string   `json:"return_type"`
	} `json:"aggregate"`
	FunctionCQL string   `json:"function_cql"`
	Average     [][]any  `json:"average"`
	Initials    []string `json:"initials"`
	Nearest     [][]any  `json:"nearest"`
	Chess       [][]any  `json:"chess"`
	Top         [][]any  `json:"top"`
	AfterDrop   []string `json:"after_drop"`
	Warnings    []string `json:"warnings"`
}

// TestPythonSchema5 checks a materialized view through the DataStax Python
// driver: its metadata (loaded from system_schema.views and .columns when
// the schema event of its creation arrives, dropped with the event of its
// DROP), the warning its CREATE gives, and reads of it in its order; then
// user functions and an aggregate: their metadata, refreshed by their
// schema events, which name their argument types, and their results; and
// a vector search, which the driver, older than the vector type, writes
// and reads through literals and similarities.
func TestPythonSchema5(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	waitAlone(t)
	host, port, _ := net.SplitHostPort(gw.Addr().String())
	var r schema5Report
	runPython(t, &r, "testdata/python/schema5.py", host, port, fmt.Sprintf("py5_%d", time.Now().UnixNano()))
	if want := []string{"Materialized views are experimental and are not recommended for production use."}; !reflect.DeepEqual(r.CreateWarnings, want) {
		t.Errorf("CREATE MATERIALIZED VIEW warnings %q, want %q", r.CreateWarnings, want)
	}
	v := r.View
	if v.BaseTableName != "scores" || v.IncludeAllColumns || v.WhereClause != "score IS NOT NULL AND user IS NOT NULL AND game IS NOT NULL" {
		t.Errorf("view metadata: base %q, include_all %v, where %q", v.BaseTableName, v.IncludeAllColumns, v.WhereClause)
	}
	if !reflect.DeepEqual(v.PartitionKey, []string{"game"}) || !reflect.DeepEqual(v.ClusteringKey, []string{"score", "user"}) ||
		!reflect.DeepEqual(v.Columns, []string{"game", "score", "user"}) {
		t.Errorf("view keys %q %q, columns %q", v.PartitionKey, v.ClusteringKey, v.Columns)
	}
	if !reflect.DeepEqual(v.OnTable, []string{"by_score"}) || !reflect.DeepEqual(v.Tables, []string{"scores"}) {
		t.Errorf("views of the base %q, tables %q", v.OnTable, v.Tables)
	}
	if !strings.HasPrefix(v.CQL, "CREATE MATERIALIZED VIEW") || !strings.Contains(v.CQL, "CLUSTERING ORDER BY (score DESC, user ASC)") {
		t.Errorf("driver's CQL of the view:\n%s", v.CQL)
	}
	if got := fmt.Sprint(r.Chess); got != "[[ann 40] [bob 30] [cid 20]]" {
		t.Errorf("chess by score DESC: %s", got)
	}
	if got := fmt.Sprint(r.Top); got != "[[ann 40] [bob 30]]" {
		t.Errorf("top two over 15: %s", got)
	}
	if len(r.AfterDrop) != 0 {
		t.Errorf("views after DROP: %q", r.AfterDrop)
	}
	if len(r.Functions) != 3 || !strings.HasPrefix(r.Functions[0], "avgfinal(") || !strings.HasPrefix(r.Functions[2], "initials(") {
		t.Errorf("function metadata: %q", r.Functions)
	}
	a := r.Aggregate
	if a.Name != "average" || !reflect.DeepEqual(a.ArgumentTypes, []string{"int"}) || a.StateFunc != "avgstate" ||
		a.FinalFunc != "avgfinal" || a.InitialCondition != "(0, 0)" || a.ReturnType != "double" || !strings.Contains(a.StateType, "tuple<int, bigint>") {
		t.Errorf("aggregate metadata: %+v", a)
	}
	if !strings.Contains(r.FunctionCQL, "RETURNS NULL ON NULL INPUT") || !strings.Contains(r.FunctionCQL, "substring(0, 1)") {
		t.Errorf("driver's CQL of a function:\n%s", r.FunctionCQL)
	}
	// ann 40 (moved from 10), bob 30, cid 20, ann 5: (40 + 30 + 20 + 5) / 4.
	if got := fmt.Sprint(r.Average); got != "[[23.75]]" {
		t.Errorf("average(score): %s", got)
	}
	if got := fmt.Sprint(r.Initials); got != "[A A B C]" {
		t.Errorf("initials(user): %s", got)
	}
	// Cassandra's cosine similarity is (1 + cos) / 2: 0.9969 for [0.9, 0.1, 0].
	if got := fmt.Sprint(r.Nearest); got != "[[0 1] [1 0.9969]]" {
		t.Errorf("ANN of [1, 0, 0]: %s", got)
	}
	// The driver logs the server's warning, as it does Cassandra's.
	checkPythonWarnings(t, "in the run", slices.DeleteFunc(r.Warnings, func(w string) bool {
		return w == "Server warning: Materialized views are experimental and are not recommended for production use."
	}))
}
