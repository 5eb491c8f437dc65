package bulk

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// FuzzParseCSV reads any file as a load of a table would, up to the rows
// it stages for the shards, without a database: it returns rows or an
// error naming the line and, for a value, the column; it never panics.
// wide picks the table: one of many column types, with clustering and
// static columns, or one with a composite partition key.
func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("k,c,s,v\n1,2024-01-02 03:04:05+0000,static,\"[1, 2]\"\n"), true)
	f.Add([]byte("a,b,v\nx,1,0x00ff\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, wide bool) {
		tables := fuzzTables()
		tab := tables[0]
		if !wide {
			tab = tables[1]
		}
		err := parseCSV(tab, data)
		if err == nil {
			return
		}
		var ce *CSVError
		if !errors.As(err, &ce) || ce.Line < 1 {
			t.Fatalf("%q: %T %v does not name a line", data, err, err)
		}
	})
}

// parseCSV reads a file as Load does, staging its rows for the shards of
// a one-shard ring instead of writing them.
func parseCSV(tab *pgschema.Table, data []byte) error {
	r := newCSVReader(bytes.NewReader(data), 0, 0)
	header, _, err := r.read(nil)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	cols, err := headerColumns(tab, header)
	if err != nil {
		return &CSVError{Line: 1, Err: err}
	}
	st, err := buildStatements(tab, cols)
	if err != nil {
		return &CSVError{Line: 1, Err: err}
	}
	out := make(chan batch)
	done := make(chan struct{})
	go func() {
		for range out {
		}
		close(done)
	}()
	err = (&Cluster{}).readBatches(context.Background(), r, tab, fuzzPlacement(), cols, st, 3, out)
	close(out)
	<-done
	return err
}

// fuzzPlacement places every token on the one shard of a ring.
var fuzzPlacement = sync.OnceValue(func() *sharding.Placement {
	ring, err := sharding.NewRing([]sharding.ShardInfo{{Name: "s0", DC: "dc1", Rack: "r1",
		Tokens: []sharding.Token{-1 << 62, 0, 1 << 62}}})
	if err != nil {
		panic(err)
	}
	return ring.Placement(sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1})
})

// fuzzTables are the tables the file is loaded into.
var fuzzTables = sync.OnceValue(func() []*pgschema.Table {
	addr := pgschema.NewUDT("ks", "addr", []string{"street", "Zip"},
		[]*pgschema.Type{pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.Int)}, true)
	typ := func(s string) *pgschema.Type {
		t, err := pgschema.ParseType(s, func(string) (*pgschema.Type, error) { return addr, nil })
		if err != nil {
			panic(err)
		}
		return t
	}
	col := func(name, t string, kind pgschema.ColumnKind, pos int, desc bool) *pgschema.Column {
		return &pgschema.Column{Name: name, Type: typ(t), Kind: kind, Position: pos, Desc: desc}
	}
	reg := func(name, t string) *pgschema.Column { return col(name, t, pgschema.Regular, -1, false) }
	wide := pgschema.NewTable("ks", "wide", [16]byte{1}, []*pgschema.Column{
		col("k", "int", pgschema.PartitionKey, 0, false),
		col("c", "timestamp", pgschema.Clustering, 0, true),
		col("d", "double", pgschema.Clustering, 1, false),
		col("s", "text", pgschema.Static, -1, false),
		reg("v", "list<int>"), reg("m", "map<text, int>"), reg("st", "set<uuid>"), reg("a", "frozen<addr>"),
		reg("b", "blob"), reg("dec", "decimal"), reg("dur", "duration"), reg("vec", "vector<float, 2>"),
		reg("tup", "frozen<tuple<int, text>>"), reg("ip", "inet"), reg("dt", "date"), reg("tm", "time"),
		reg("vi", "varint"), reg("bo", "boolean"), reg("ti", "tinyint"), reg("tu", "timeuuid"),
	}, map[string]string{})
	composite := pgschema.NewTable("ks", "composite", [16]byte{2}, []*pgschema.Column{
		col("a", "text", pgschema.PartitionKey, 0, false),
		col("b", "bigint", pgschema.PartitionKey, 1, false),
		reg("v", "blob"), reg("Quoted", "ascii"),
	}, map[string]string{})
	return []*pgschema.Table{wide, composite}
})
