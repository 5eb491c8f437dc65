package pgschema_test

import (
	"errors"
	"maps"
	"math"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

func optText(name, v string) pgschema.OptionValue { return pgschema.OptionValue{Name: name, Text: v} }

func optMap(name string, m map[string]string) pgschema.OptionValue {
	return pgschema.OptionValue{Name: name, IsMap: true, Map: m}
}

func TestApplyTableOptions(t *testing.T) {
	tests := []struct {
		name  string
		given []pgschema.OptionValue
		want  map[string]string
	}{
		{"none", nil, map[string]string{}},
		{"simple values in canonical form", []pgschema.OptionValue{
			optText("comment", "it's"), optText("gc_grace_seconds", "0"), optText("bloom_filter_fp_chance", "0.0001"),
			optText("crc_check_chance", "1"), optText("cdc", "TRUE"), optText("default_time_to_live", "630720000"),
			optText("memtable", "default"), optText("read_repair", "none"), optText("min_index_interval", "64"),
			optText("max_index_interval", "64"), optText("memtable_flush_period_in_ms", "60000"),
		}, map[string]string{
			"comment": "'it''s'", "gc_grace_seconds": "0", "bloom_filter_fp_chance": "1.0E-4",
			"crc_check_chance": "1.0", "cdc": "true", "default_time_to_live": "630720000",
			"memtable": "'default'", "read_repair": "'NONE'", "min_index_interval": "64",
			"max_index_interval": "64", "memtable_flush_period_in_ms": "60000",
		}},
		{"speculative retry forms", []pgschema.OptionValue{
			optText("speculative_retry", "99.50PERCENTILE"), optText("additional_write_policy", "max(50MS, 90p)"),
		}, map[string]string{"speculative_retry": "'99.5p'", "additional_write_policy": "'MAX(90p,50ms)'"}},
		{"retry keywords", []pgschema.OptionValue{optText("speculative_retry", "always"), optText("additional_write_policy", "None")},
			map[string]string{"speculative_retry": "'ALWAYS'", "additional_write_policy": "'NONE'"}},
		{"maps", []pgschema.OptionValue{
			optMap("compaction", map[string]string{"class": "LeveledCompactionStrategy", "sstable_size_in_mb": "160"}),
			optMap("compression", map[string]string{"sstable_compression": "SnappyCompressor", "chunk_length_kb": "64"}),
			optMap("caching", map[string]string{"keys": "all", "rows_per_partition": "2147483647"}),
		}, map[string]string{
			"compaction":  "{'class': 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4', 'sstable_size_in_mb': '160'}",
			"compression": "{'chunk_length_in_kb': '64', 'class': 'org.apache.cassandra.io.compress.SnappyCompressor'}",
			"caching":     "{'keys': 'ALL', 'rows_per_partition': 'ALL'}",
		}},
		{"custom classes keep any sub-options", []pgschema.OptionValue{
			optMap("compaction", map[string]string{"class": "com.example.Strategy", "anything": "goes"}),
		}, map[string]string{"compaction": "{'anything': 'goes', 'class': 'com.example.Strategy'}"}},
		{"compression off", []pgschema.OptionValue{optMap("compression", map[string]string{"enabled": "false"})},
			map[string]string{"compression": "{'enabled': 'false'}"}},
		{"empty caching caches nothing", []pgschema.OptionValue{optMap("caching", map[string]string{})},
			map[string]string{"caching": "{'keys': 'NONE', 'rows_per_partition': 'NONE'}"}},
		{"id and extensions are accepted, not stored", []pgschema.OptionValue{
			optText("id", "5a1c395e-b41f-11e5-9f3d-51975b283c4e"), optMap("extensions", map[string]string{"a": "b"}),
		}, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pgschema.DefaultTableParams().Apply(tc.given)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
			// What is stored reads back to the same options.
			p := pgschema.ParamsOf(got)
			for name, literal := range got {
				if p.Literal(name) != literal {
					t.Errorf("%s read back as %s, stored %s", name, p.Literal(name), literal)
				}
			}
		})
	}
}

func TestApplyTableOptionsErrors(t *testing.T) {
	tests := []struct {
		name   string
		given  []pgschema.OptionValue
		syntax bool
		want   string
	}{
		{"duplicate", []pgschema.OptionValue{optText("comment", "a"), optText("comment", "b")}, true,
			"Multiple definitions for property 'comment'"},
		{"unknown", []pgschema.OptionValue{optText("comment", "a"), optText("foo", "b")}, true, "Unknown property 'foo'"},
		{"removed in 4.0", []pgschema.OptionValue{optText("read_repair_chance", "0.1")}, true, "Unknown property 'read_repair_chance'"},
		{"map for a string", []pgschema.OptionValue{optMap("comment", nil)}, true,
			"Invalid value for property 'comment'. It should be a string"},
		{"string for a map", []pgschema.OptionValue{optText("compaction", "x")}, true,
			"Invalid value for property 'compaction'. It should be a map."},
		{"not an integer", []pgschema.OptionValue{optText("gc_grace_seconds", "1.5")}, true,
			"Invalid integer value 1.5 for 'gc_grace_seconds'"},
		{"integer overflow", []pgschema.OptionValue{optText("default_time_to_live", "2147483648")}, true,
			"Invalid integer value 2147483648 for 'default_time_to_live'"},
		{"not a double", []pgschema.OptionValue{optText("bloom_filter_fp_chance", "abc")}, true,
			"Invalid double value abc for 'bloom_filter_fp_chance'"},
		{"not a boolean", []pgschema.OptionValue{optText("cdc", "maybe")}, true,
			"Invalid boolean value maybe for 'cdc'. Positive values can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'."},
		{"first bad option in Cassandra's order", []pgschema.OptionValue{optText("cdc", "x"), optText("gc_grace_seconds", "x")}, true,
			"Invalid integer value x for 'gc_grace_seconds'"},
		{"bloom filter too small", []pgschema.OptionValue{optText("bloom_filter_fp_chance", "0.0000001")}, false,
			"bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 1.0E-7)"},
		{"bloom filter too large", []pgschema.OptionValue{optText("bloom_filter_fp_chance", "1.1")}, false,
			"bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 1.1)"},
		{"crc chance", []pgschema.OptionValue{optText("crc_check_chance", "2")}, false,
			"crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 2.0)"},
		{"negative ttl", []pgschema.OptionValue{optText("default_time_to_live", "-1")}, false,
			"default_time_to_live must be greater than or equal to 0 (got -1)"},
		{"ttl too large", []pgschema.OptionValue{optText("default_time_to_live", "630720001")}, false,
			"default_time_to_live must be less than or equal to 630720000 (got 630720001)"},
		{"negative gc grace", []pgschema.OptionValue{optText("gc_grace_seconds", "-5")}, false,
			"gc_grace_seconds must be greater than or equal to 0 (got -5)"},
		{"min index interval", []pgschema.OptionValue{optText("min_index_interval", "0")}, false,
			"min_index_interval must be greater than or equal to 1 (got 0)"},
		{"max below min", []pgschema.OptionValue{optText("max_index_interval", "100")}, false,
			"max_index_interval must be greater than or equal to min_index_interval (128) (got 100)"},
		{"flush period", []pgschema.OptionValue{optText("memtable_flush_period_in_ms", "-1")}, false,
			"memtable_flush_period_in_ms must be greater than or equal to 0 (got -1)"},
		{"retry", []pgschema.OptionValue{optText("speculative_retry", "sometimes")}, false,
			"Invalid value sometimes for option 'speculative_retry'"},
		{"write policy reports as speculative_retry", []pgschema.OptionValue{optText("additional_write_policy", "42")}, false,
			"Invalid value 42 for option 'speculative_retry'"},
		{"percentile range", []pgschema.OptionValue{optText("speculative_retry", "100p")}, false,
			"Invalid value 100p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)"},
		{"hybrid of one kind", []pgschema.OptionValue{optText("speculative_retry", "MIN(99p,95p)")}, false,
			"Invalid value MIN(99p,95p) for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type PERCENTILE"},
		{"memtable", []pgschema.OptionValue{optText("memtable", "fancy")}, false, `Memtable configuration "fancy" not found.`},
		{"caching keys", []pgschema.OptionValue{optMap("caching", map[string]string{"keys": "some"})}, false,
			"Invalid value 'some' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"},
		{"caching rows", []pgschema.OptionValue{optMap("caching", map[string]string{"rows_per_partition": "many"})}, false,
			"Invalid value 'many' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed"},
		{"caching sub-options", []pgschema.OptionValue{optMap("caching", map[string]string{"keys": "ALL", "b": "1", "a": "2"})}, false,
			"Invalid caching sub-options [a, b]: only 'keys' and 'rows_per_partition' are allowed"},
		{"compaction class", []pgschema.OptionValue{optMap("compaction", map[string]string{"min_threshold": "4"})}, false,
			"Missing sub-option 'class' for the 'compaction' option"},
		{"unknown strategy", []pgschema.OptionValue{optMap("compaction", map[string]string{"class": "Fancy"})}, false,
			"Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Fancy'"},
		{"thresholds", []pgschema.OptionValue{optMap("compaction", map[string]string{"class": "SizeTieredCompactionStrategy", "min_threshold": "40"})}, false,
			"Min compaction threshold (got 40) cannot be greater than max compaction threshold (got 32)"},
		{"compression class", []pgschema.OptionValue{optMap("compression", map[string]string{"chunk_length_in_kb": "64"})}, false,
			"Missing sub-option 'class' for the 'compression' option."},
		{"compression off with options", []pgschema.OptionValue{optMap("compression", map[string]string{"enabled": "false", "class": "LZ4Compressor"})}, false,
			"If the 'enabled' option is set to false no other options must be specified"},
		{"chunk length", []pgschema.OptionValue{optMap("compression", map[string]string{"class": "LZ4Compressor", "chunk_length_in_kb": "3"})}, false,
			"chunk_length_in_kb must be a power of 2"},
		{"table id", []pgschema.OptionValue{optText("id", "nope")}, false, "Invalid table id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pgschema.DefaultTableParams().Apply(tc.given)
			var oe *pgschema.OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("err = %v", err)
			}
			if oe.Msg != tc.want || oe.Syntax != tc.syntax {
				t.Errorf("got %q (syntax %v)\nwant %q (syntax %v)", oe.Msg, oe.Syntax, tc.want, tc.syntax)
			}
		})
	}
}

func TestParamsOf(t *testing.T) {
	// What earlier versions stored, and what a table without options has.
	p := pgschema.ParamsOf(map[string]string{
		"comment":            "'hi'",
		"compaction":         "{'class': 'LeveledCompactionStrategy'}",
		"read_repair_chance": "0.1",
		"gc_grace_seconds":   "not a number",
	})
	if p.Comment != "hi" || p.GCGraceSeconds != 864000 || p.BloomFilterFPChance != 0.1 ||
		p.Compaction["class"] != "org.apache.cassandra.db.compaction.LeveledCompactionStrategy" || p.Compaction["max_threshold"] != "32" {
		t.Errorf("params %+v", p)
	}
	if d := pgschema.ParamsOf(nil); d.Literal("caching") != "{'keys': 'ALL', 'rows_per_partition': 'NONE'}" || d.Literal("extensions") != "{}" {
		t.Errorf("defaults %+v", d)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", 0.01: "0.01", 0.1: "0.1", 100: "100.0", 0.001: "0.001", 0.0001: "1.0E-4",
		6.71e-05: "6.71E-5", 1e7: "1.0E7", 9999999: "9999999.0", 1.5e300: "1.5E300", -2.5: "-2.5",
		math.Inf(1): "Infinity", math.NaN(): "NaN",
	} {
		if got := pgschema.JavaDouble(f); got != want {
			t.Errorf("JavaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}
