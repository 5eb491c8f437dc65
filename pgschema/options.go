package pgschema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TableParams are a table's options as Cassandra 4.1 models them
// (schema/TableParams): what CREATE and ALTER TABLE ... WITH set,
// system_schema.tables shows and DESCRIBE prints. Options that mean nothing
// to Postgres (compaction, caching, bloom filters, ...) are validated, kept
// and shown all the same, so that schema tools see what they wrote.
//
// A table stores only the options it was given, each as the CQL literal of
// its canonical value (Table.Options); Params fills in the rest with the
// defaults.
type TableParams struct {
	AdditionalWritePolicy string
	BloomFilterFPChance   float64
	// Caching holds keys and rows_per_partition.
	Caching map[string]string
	CDC     bool
	Comment string
	// Compaction holds the strategy's full class name under "class" and
	// its sub-options; Compression the compressor's class and chunk length,
	// or only enabled=false.
	Compaction            map[string]string
	Compression           map[string]string
	CRCCheckChance        float64
	DefaultTimeToLive     int
	GCGraceSeconds        int
	MaxIndexInterval      int
	Memtable              string
	MemtableFlushPeriodMs int
	MinIndexInterval      int
	ReadRepair            string
	SpeculativeRetry      string
}

// Table option names, as CQL and system_schema.tables spell them.
const (
	OptAdditionalWritePolicy = "additional_write_policy"
	OptBloomFilterFPChance   = "bloom_filter_fp_chance"
	OptCaching               = "caching"
	OptCDC                   = "cdc"
	OptComment               = "comment"
	OptCompaction            = "compaction"
	OptCompression           = "compression"
	OptCRCCheckChance        = "crc_check_chance"
	OptDefaultTimeToLive     = "default_time_to_live"
	OptExtensions            = "extensions"
	OptGCGraceSeconds        = "gc_grace_seconds"
	OptMaxIndexInterval      = "max_index_interval"
	OptMemtable              = "memtable"
	OptMemtableFlushPeriodMs = "memtable_flush_period_in_ms"
	OptMinIndexInterval      = "min_index_interval"
	OptReadRepair            = "read_repair"
	OptSpeculativeRetry      = "speculative_retry"
	// OptID sets a new table's id; it is not a parameter of the table.
	OptID = "id"
)

// TableOptionNames lists the options in the order DESCRIBE prints them
// (TableParams.appendCqlTo in 4.1, where memtable follows compression).
var TableOptionNames = []string{
	OptAdditionalWritePolicy, OptBloomFilterFPChance, OptCaching, OptCDC, OptComment,
	OptCompaction, OptCompression, OptMemtable, OptCRCCheckChance, OptDefaultTimeToLive,
	OptExtensions, OptGCGraceSeconds, OptMaxIndexInterval, OptMemtableFlushPeriodMs,
	OptMinIndexInterval, OptReadRepair, OptSpeculativeRetry,
}

// optionBuildOrder is the order in which Cassandra reads the given options
// (TableAttributes.build), which decides which error a statement with
// several bad options gets.
var optionBuildOrder = []string{
	OptBloomFilterFPChance, OptCaching, OptComment, OptCompaction, OptCompression, OptMemtable,
	OptDefaultTimeToLive, OptGCGraceSeconds, OptMaxIndexInterval, OptMemtableFlushPeriodMs,
	OptMinIndexInterval, OptSpeculativeRetry, OptAdditionalWritePolicy, OptCRCCheckChance, OptCDC,
	OptReadRepair,
}

// mapTableOptions are the options whose value is a map literal.
var mapTableOptions = map[string]bool{OptCaching: true, OptCompaction: true, OptCompression: true, OptExtensions: true}

// Class names and defaults of Cassandra 4.1.
const (
	compactionPackage  = "org.apache.cassandra.db.compaction."
	compressionPackage = "org.apache.cassandra.io.compress."
	stcsClass          = compactionPackage + "SizeTieredCompactionStrategy"
	lcsClass           = compactionPackage + "LeveledCompactionStrategy"
	twcsClass          = compactionPackage + "TimeWindowCompactionStrategy"
	lz4Class           = compressionPackage + "LZ4Compressor"
	// maxTableTTL is Attributes.MAX_TTL, twenty years in seconds.
	maxTableTTL = 630720000
	// minBloomFilterFPChance is BloomCalculations.minSupportedBloomFilterFpChance().
	minBloomFilterFPChance = 6.71e-05
)

// knownCompactionClasses lists the compaction strategies Cassandra 4.1 ships; all
// of them take min_threshold and max_threshold.
var knownCompactionClasses = map[string]bool{stcsClass: true, lcsClass: true, twcsClass: true}

// knownCompressorClasses lists the compressors Cassandra 4.1 ships.
var knownCompressorClasses = map[string]bool{
	lz4Class: true, compressionPackage + "SnappyCompressor": true, compressionPackage + "DeflateCompressor": true,
	compressionPackage + "ZstdCompressor": true, compressionPackage + "NoopCompressor": true,
}

// memtableConfigurations are the memtable configurations of Cassandra 4.1's
// stock cassandra.yaml.
var memtableConfigurations = map[string]bool{"default": true, "skiplist": true, "sharded": true}

// DefaultTableParams returns the options of a table created without WITH.
func DefaultTableParams() *TableParams {
	return &TableParams{
		AdditionalWritePolicy: "99p",
		BloomFilterFPChance:   0.01,
		Caching:               map[string]string{"keys": "ALL", "rows_per_partition": "NONE"},
		Compaction:            map[string]string{"class": stcsClass, "max_threshold": "32", "min_threshold": "4"},
		Compression:           map[string]string{"chunk_length_in_kb": "16", "class": lz4Class},
		CRCCheckChance:        1,
		GCGraceSeconds:        864000,
		MaxIndexInterval:      2048,
		Memtable:              "default",
		MinIndexInterval:      128,
		ReadRepair:            "BLOCKING",
		SpeculativeRetry:      "99p",
	}
}

// OptionError is a table option Cassandra refuses, with its text: a syntax
// error (unknown option, value of the wrong kind) or a configuration error
// (a value out of range).
type OptionError struct {
	Syntax bool
	Msg    string
}

func (e *OptionError) Error() string { return e.Msg }

func optionSyntaxf(format string, args ...any) error {
	return &OptionError{Syntax: true, Msg: fmt.Sprintf(format, args...)}
}

func optionConfigf(format string, args ...any) error {
	return &OptionError{Msg: fmt.Sprintf(format, args...)}
}

// OptionValue is one WITH option as a statement gives it: the text of a
// constant (a string's contents, a number as written), or a map of
// constants.
type OptionValue struct {
	Name  string
	Text  string
	Map   map[string]string
	IsMap bool
}

// Apply sets the options a CREATE or ALTER TABLE gives, validating them as
// Cassandra does: the names first, then each value in Cassandra's order,
// then the ranges (TableParams.validate). It returns the options to store
// for the table: each given option's canonical CQL literal by name. The id
// option is checked but not stored, and extensions, which Cassandra accepts
// and ignores, are ignored.
func (p *TableParams) Apply(given []OptionValue) (map[string]string, error) {
	byName := map[string]OptionValue{}
	for _, o := range given {
		if _, dup := byName[o.Name]; dup {
			return nil, optionSyntaxf("Multiple definitions for property '%s'", o.Name)
		}
		byName[o.Name] = o
	}
	for _, o := range given {
		if o.Name != OptID && !slices.Contains(TableOptionNames, o.Name) {
			return nil, optionSyntaxf("Unknown property '%s'", o.Name)
		}
	}
	for _, name := range optionBuildOrder {
		if o, ok := byName[name]; ok {
			if err := p.set(o); err != nil {
				return nil, err
			}
		}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if o, ok := byName[OptID]; ok {
		if o.IsMap {
			return nil, optionSyntaxf("Invalid value for property '%s'. It should be a string", OptID)
		}
		if !tableIDSyntax.MatchString(o.Text) {
			return nil, optionConfigf("Invalid table id")
		}
	}
	stored := map[string]string{}
	for name := range byName {
		if name != OptID && name != OptExtensions {
			stored[name] = p.Literal(name)
		}
	}
	return stored, nil
}

// set reads one option's value into p.
func (p *TableParams) set(o OptionValue) error {
	if mapTableOptions[o.Name] != o.IsMap {
		if o.IsMap {
			return optionSyntaxf("Invalid value for property '%s'. It should be a string", o.Name)
		}
		return optionSyntaxf("Invalid value for property '%s'. It should be a map.", o.Name)
	}
	var err error
	switch o.Name {
	case OptAdditionalWritePolicy:
		p.AdditionalWritePolicy, err = speculativeRetryPolicy(o.Text)
	case OptBloomFilterFPChance:
		p.BloomFilterFPChance, err = optionDouble(o.Name, o.Text)
	case OptCaching:
		p.Caching, err = cachingParams(o.Map)
	case OptCDC:
		p.CDC, err = optionBool(o.Name, o.Text)
	case OptComment:
		p.Comment = o.Text
	case OptCompaction:
		p.Compaction, err = compactionParams(o.Map)
	case OptCompression:
		p.Compression, err = compressionParams(o.Map)
	case OptCRCCheckChance:
		p.CRCCheckChance, err = optionDouble(o.Name, o.Text)
	case OptDefaultTimeToLive:
		p.DefaultTimeToLive, err = optionInt(o.Name, o.Text)
	case OptGCGraceSeconds:
		p.GCGraceSeconds, err = optionInt(o.Name, o.Text)
	case OptMaxIndexInterval:
		p.MaxIndexInterval, err = optionInt(o.Name, o.Text)
	case OptMemtable:
		if !memtableConfigurations[o.Text] {
			return optionConfigf("Memtable configuration \"%s\" not found.", o.Text)
		}
		p.Memtable = o.Text
	case OptMemtableFlushPeriodMs:
		p.MemtableFlushPeriodMs, err = optionInt(o.Name, o.Text)
	case OptMinIndexInterval:
		p.MinIndexInterval, err = optionInt(o.Name, o.Text)
	case OptReadRepair:
		switch up := strings.ToUpper(o.Text); up {
		case "NONE", "BLOCKING":
			p.ReadRepair = up
		default:
			// Cassandra fails here with Enum.valueOf's exception.
			return optionConfigf("No enum constant org.apache.cassandra.service.reads.repair.ReadRepairStrategy.%s", up)
		}
	case OptSpeculativeRetry:
		p.SpeculativeRetry, err = speculativeRetryPolicy(o.Text)
	}
	return err
}

// validate applies TableParams.validate's range checks.
func (p *TableParams) validate() error {
	if err := validateCompactionParams(p.Compaction); err != nil {
		return err
	}
	if err := validateCompressionParams(p.Compression); err != nil {
		return err
	}
	switch {
	case p.BloomFilterFPChance <= minBloomFilterFPChance || p.BloomFilterFPChance > 1:
		return optionConfigf("%s must be larger than %s and less than or equal to 1.0 (got %s)",
			OptBloomFilterFPChance, JavaDouble(minBloomFilterFPChance), JavaDouble(p.BloomFilterFPChance))
	case p.CRCCheckChance < 0 || p.CRCCheckChance > 1:
		return optionConfigf("%s must be larger than or equal to 0 and smaller than or equal to 1.0 (got %s)",
			OptCRCCheckChance, JavaDouble(p.CRCCheckChance))
	case p.DefaultTimeToLive < 0:
		return optionConfigf("%s must be greater than or equal to 0 (got %d)", OptDefaultTimeToLive, p.DefaultTimeToLive)
	case p.DefaultTimeToLive > maxTableTTL:
		return optionConfigf("%s must be less than or equal to %d (got %d)", OptDefaultTimeToLive, maxTableTTL, p.DefaultTimeToLive)
	case p.GCGraceSeconds < 0:
		return optionConfigf("%s must be greater than or equal to 0 (got %d)", OptGCGraceSeconds, p.GCGraceSeconds)
	case p.MinIndexInterval < 1:
		return optionConfigf("%s must be greater than or equal to 1 (got %d)", OptMinIndexInterval, p.MinIndexInterval)
	case p.MaxIndexInterval < p.MinIndexInterval:
		return optionConfigf("%s must be greater than or equal to %s (%d) (got %d)",
			OptMaxIndexInterval, OptMinIndexInterval, p.MinIndexInterval, p.MaxIndexInterval)
	case p.MemtableFlushPeriodMs < 0:
		return optionConfigf("%s must be greater than or equal to 0 (got %d)", OptMemtableFlushPeriodMs, p.MemtableFlushPeriodMs)
	}
	return nil
}

// Params returns the table's options, defaults filled in.
func (t *Table) Params() *TableParams { return ParamsOf(t.Options) }

// ParamsOf reads stored table options (option name to CQL literal) over the
// defaults. It accepts whatever earlier versions stored, such as 'hi' or
// {'class': 'LeveledCompactionStrategy'}, and skips values it cannot read
// rather than failing the schema load.
func ParamsOf(stored map[string]string) *TableParams {
	p := DefaultTableParams()
	for _, name := range optionBuildOrder {
		literal, ok := stored[name]
		if !ok {
			continue
		}
		v, ok := parseOptionLiteral(literal)
		if !ok {
			continue
		}
		v.Name = name
		q := *p
		if q.set(v) == nil {
			*p = q
		}
	}
	// Leveled compaction makes the default false-positive chance 0.1
	// (CompactionParams.defaultBloomFilterFbChance).
	if _, ok := stored[OptBloomFilterFPChance]; !ok && p.Compaction["class"] == lcsClass {
		p.BloomFilterFPChance = 0.1
	}
	return p
}

// Literal returns an option's value as CQL writes it, the form DESCRIBE
// prints and the catalog stores: 'text', 0.01, 864000, false, or a map
// {'key': 'value', ...} with sorted keys.
func (p *TableParams) Literal(name string) string {
	switch name {
	case OptAdditionalWritePolicy:
		return QuoteString(p.AdditionalWritePolicy)
	case OptBloomFilterFPChance:
		return JavaDouble(p.BloomFilterFPChance)
	case OptCaching:
		return MapLiteral(p.Caching)
	case OptCDC:
		return strconv.FormatBool(p.CDC)
	case OptComment:
		return QuoteString(p.Comment)
	case OptCompaction:
		return MapLiteral(p.Compaction)
	case OptCompression:
		return MapLiteral(p.Compression)
	case OptCRCCheckChance:
		return JavaDouble(p.CRCCheckChance)
	case OptDefaultTimeToLive:
		return strconv.Itoa(p.DefaultTimeToLive)
	case OptExtensions:
		return "{}"
	case OptGCGraceSeconds:
		return strconv.Itoa(p.GCGraceSeconds)
	case OptMaxIndexInterval:
		return strconv.Itoa(p.MaxIndexInterval)
	case OptMemtable:
		return QuoteString(p.Memtable)
	case OptMemtableFlushPeriodMs:
		return strconv.Itoa(p.MemtableFlushPeriodMs)
	case OptMinIndexInterval:
		return strconv.Itoa(p.MinIndexInterval)
	case OptReadRepair:
		return QuoteString(p.ReadRepair)
	case OptSpeculativeRetry:
		return QuoteString(p.SpeculativeRetry)
	}
	return ""
}

// QuoteString writes s as a CQL string literal, doubling single quotes.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// MapLiteral writes a map of strings as CQL does in DESCRIBE (CqlBuilder):
// {'k1': 'v1', 'k2': 'v2'}, keys sorted.
func MapLiteral(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteString(k))
		b.WriteString(": ")
		b.WriteString(QuoteString(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// JavaDouble formats f as Java's Double.toString does: 0.01, 1.0, 100.0,
// and 1.0E-5 or 1.0E7 outside [10^-3, 10^7).
func JavaDouble(f float64) string { return JavaFloat(f, 64) }

// parseOptionLiteral reads a stored option literal: 'text' (quotes doubled), a
// map {'k': 'v', ...} of such literals or bare constants, or a bare
// constant such as 0.01, 864000 or true.
func parseOptionLiteral(s string) (OptionValue, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		text, rest, ok := optionConstant(s)
		return OptionValue{Text: text}, ok && strings.TrimSpace(rest) == ""
	}
	v := OptionValue{IsMap: true, Map: map[string]string{}}
	rest := strings.TrimSpace(s[1:])
	for !strings.HasPrefix(rest, "}") {
		key, r, ok := optionConstant(rest)
		if !ok {
			return v, false
		}
		r = strings.TrimSpace(r)
		if !strings.HasPrefix(r, ":") {
			return v, false
		}
		val, r, ok := optionConstant(strings.TrimSpace(r[1:]))
		if !ok {
			return v, false
		}
		v.Map[key] = val
		rest = strings.TrimSpace(r)
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimSpace(rest[1:])
		} else if !strings.HasPrefix(rest, "}") {
			return v, false
		}
	}
	return v, strings.TrimSpace(rest[1:]) == ""
}

// optionConstant reads one quoted string or bare word from the start of s.
func optionConstant(s string) (text, rest string, ok bool) {
	if strings.HasPrefix(s, "'") {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '\'' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], true
		}
		return "", "", false
	}
	end := strings.IndexAny(s, ",:} \t\n")
	if end < 0 {
		end = len(s)
	}
	return s[:end], s[end:], end > 0
}
