package pgschema

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// optionInt reads an integer option as Java's Integer.parseInt does.
func optionInt(name, s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || strings.Contains(s, "_") {
		return 0, optionSyntaxf("Invalid integer value %s for '%s'", s, name)
	}
	return int(n), nil
}

// javaDoubleSyntax matches what Java's Double.parseDouble reads (decimal forms):
// a sign, digits with an optional point and exponent, an optional d or f
// suffix, or NaN and Infinity.
var javaDoubleSyntax = regexp.MustCompile(`^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)$`)

// tableIDSyntax matches a UUID as Java's UUID.fromString reads it.
var tableIDSyntax = regexp.MustCompile(`^[0-9a-fA-F]{1,8}-[0-9a-fA-F]{1,4}-[0-9a-fA-F]{1,4}-[0-9a-fA-F]{1,4}-[0-9a-fA-F]{1,12}$`)

// optionDouble reads a floating-point option as Java's Double.parseDouble
// does: surrounding blanks are ignored.
func optionDouble(name, s string) (float64, error) {
	t := strings.TrimSpace(s)
	if !javaDoubleSyntax.MatchString(t) {
		return 0, optionSyntaxf("Invalid double value %s for '%s'", s, name)
	}
	t = strings.TrimRight(t, "fFdD")
	if strings.HasSuffix(t, "NaN") {
		return math.NaN(), nil
	}
	if strings.HasSuffix(t, "Infinity") {
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, optionSyntaxf("Invalid double value %s for '%s'", s, name)
	}
	return f, nil
}

// optionBool reads a boolean option: 1, true or yes; 0, false or no.
func optionBool(name, s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, optionSyntaxf("Invalid boolean value %s for '%s'. Positive values can be '1', 'true' or 'yes'. "+
		"Negative values can be '0', 'false' or 'no'.", s, name)
}

var (
	percentileRetry = regexp.MustCompile(`(?i)^([0-9.]+)p(ercentile)?$`)
	fixedRetry      = regexp.MustCompile(`(?i)^([0-9.]+)ms$`)
	hybridRetry     = regexp.MustCompile(`(?i)^(MIN|MAX)\(([0-9.]+[a-z]+)\s*,\s*([0-9.]+[a-z]+)\)$`)
)

// speculativeRetryPolicy parses a speculative_retry or additional_write_policy
// value (SpeculativeRetryPolicy.fromString) and returns it as Cassandra
// prints it: ALWAYS, NONE, 99p, 50ms, MIN(99p,50ms).
func speculativeRetryPolicy(s string) (string, error) {
	invalid := optionConfigf("Invalid value %s for option '%s'", s, OptSpeculativeRetry)
	switch {
	case strings.EqualFold(s, "ALWAYS"):
		return "ALWAYS", nil
	case strings.EqualFold(s, "NONE"):
		return "NONE", nil
	case percentileRetry.MatchString(s):
		v, err := strconv.ParseFloat(percentileRetry.FindStringSubmatch(s)[1], 64)
		if err != nil {
			return "", invalid
		}
		if v <= 0 || v >= 100 {
			return "", optionConfigf("Invalid value %s for PERCENTILE option '%s': must be between (0.0 and 100.0)", s, OptSpeculativeRetry)
		}
		return percentileText(v) + "p", nil
	case fixedRetry.MatchString(s):
		v, err := strconv.ParseFloat(fixedRetry.FindStringSubmatch(s)[1], 64)
		if err != nil {
			return "", invalid
		}
		return strconv.Itoa(int(javaIntCast(v))) + "ms", nil
	case hybridRetry.MatchString(s):
		m := hybridRetry.FindStringSubmatch(s)
		a, errA := speculativeRetryPolicy(m[2])
		b, errB := speculativeRetryPolicy(m[3])
		if errA != nil || errB != nil {
			return "", invalid
		}
		kindA, kindB := retryKind(a), retryKind(b)
		if kindA == kindB {
			return "", optionConfigf("Invalid value %s for option '%s': MIN()/MAX() arguments should be of different types, but both are of type %s",
				s, OptSpeculativeRetry, kindA)
		}
		if kindA != "PERCENTILE" {
			a, b = b, a
		}
		return strings.ToUpper(m[1]) + "(" + a + "," + b + ")", nil
	}
	return "", invalid
}

// retryKind names a canonical policy's kind as SpeculativeRetryPolicy.Kind.
func retryKind(policy string) string {
	switch {
	case policy == "ALWAYS":
		return "ALWAYS"
	case policy == "NONE":
		return "NEVER"
	case strings.HasSuffix(policy, "ms"):
		return "FIXED"
	case strings.HasSuffix(policy, "p"):
		return "PERCENTILE"
	}
	return "HYBRID"
}

// javaIntCast converts like Java's (int) cast of a double.
func javaIntCast(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v > math.MaxInt32:
		return math.MaxInt32
	case v < math.MinInt32:
		return math.MinInt32
	}
	return math.Trunc(v)
}

// percentileText formats like Java's DecimalFormat("#.####").
func percentileText(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// cachingParams validates caching sub-options (CachingParams.fromMap): keys is
// ALL or NONE, and NONE when absent; rows_per_partition is ALL, NONE or
// a count.
func cachingParams(m map[string]string) (map[string]string, error) {
	var others []string
	for k := range m {
		if k != "keys" && k != "rows_per_partition" {
			others = append(others, k)
		}
	}
	keys := "NONE"
	if v, ok := m["keys"]; ok {
		switch strings.ToUpper(v) {
		case "ALL", "NONE":
			keys = strings.ToUpper(v)
		default:
			return nil, optionConfigf("Invalid value '%s' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed", v)
		}
	}
	rows := "NONE"
	if v, ok := m["rows_per_partition"]; ok {
		switch up := strings.ToUpper(v); {
		case up == "ALL" || up == "NONE":
			rows = up
		case v != "" && strings.Trim(v, "0123456789") == "":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, optionConfigf("Invalid value '%s' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed", v)
			}
			switch n {
			case 0:
				rows = "NONE"
			case math.MaxInt32:
				rows = "ALL"
			default:
				rows = strconv.FormatInt(n, 10)
			}
		default:
			return nil, optionConfigf("Invalid value '%s' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed", v)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		return nil, optionConfigf("Invalid caching sub-options [%s]: only 'keys' and 'rows_per_partition' are allowed", strings.Join(others, ", "))
	}
	return map[string]string{"keys": keys, "rows_per_partition": rows}, nil
}

// compactionParams validates the compaction map (CompactionParams.fromMap): the
// class is required, a short name is looked up in Cassandra's compaction
// package, and the built-in strategies get their threshold defaults. Other
// sub-options are kept as given.
func compactionParams(m map[string]string) (map[string]string, error) {
	class, ok := m["class"]
	if !ok {
		return nil, optionConfigf("Missing sub-option 'class' for the 'compaction' option")
	}
	if !strings.Contains(class, ".") {
		class = compactionPackage + class
	}
	if strings.HasPrefix(class, "org.apache.cassandra.") && !knownCompactionClasses[class] {
		return nil, optionConfigf("Unable to find compaction strategy class '%s'", class)
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	out["class"] = class
	if knownCompactionClasses[class] {
		if _, ok := out["min_threshold"]; !ok {
			out["min_threshold"] = "4"
		}
		if _, ok := out["max_threshold"]; !ok {
			out["max_threshold"] = "32"
		}
	}
	return out, nil
}

// validateCompactionParams applies CompactionParams.validate's threshold checks.
func validateCompactionParams(m map[string]string) error {
	lo, err1 := strconv.Atoi(m["min_threshold"])
	hi, err2 := strconv.Atoi(m["max_threshold"])
	if err1 != nil || err2 != nil {
		return nil
	}
	switch {
	case lo <= 0 || hi <= 0:
		return optionConfigf("Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option 'enabled' to false instead.")
	case lo <= 1:
		return optionConfigf("Min compaction threshold cannot be less than 2 (got %d)", lo)
	case lo > hi:
		return optionConfigf("Min compaction threshold (got %d) cannot be greater than max compaction threshold (got %d)", lo, hi)
	}
	return nil
}

// compressionParams validates the compression map (CompressionParams.fromMap):
// enabled=false alone turns compression off; otherwise a class is required
// (sstable_compression is its old name) and looked up in Cassandra's
// compress package, and chunk_length_in_kb defaults to 16.
func compressionParams(m map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	enabled := true
	if v, ok := out["enabled"]; ok {
		enabled = strings.EqualFold(v, "true")
		delete(out, "enabled")
	}
	class, hasClass := out["class"]
	if old, ok := out["sstable_compression"]; ok && !hasClass {
		class, hasClass = old, true
	}
	if len(m) > 0 && enabled && !hasClass {
		return nil, optionConfigf("Missing sub-option 'class' for the 'compression' option.")
	}
	if !enabled {
		if len(out) > 0 {
			return nil, optionConfigf("If the 'enabled' option is set to false no other options must be specified")
		}
		return map[string]string{"enabled": "false"}, nil
	}
	delete(out, "sstable_compression")
	if class == "" {
		// No compressor, as with compression = {}: compression is off.
		return map[string]string{"enabled": "false"}, nil
	}
	if !strings.Contains(class, ".") {
		class = compressionPackage + class
	}
	if strings.HasPrefix(class, "org.apache.cassandra.") && !knownCompressorClasses[class] {
		return nil, optionConfigf("Could not create Compression for type %s", class)
	}
	out["class"] = class
	chunk := "16"
	if v, ok := out["chunk_length_in_kb"]; ok {
		if _, old := out["chunk_length_kb"]; old {
			return nil, optionConfigf("The 'chunk_length_kb' option must not be used if the chunk length is already specified by the 'chunk_length_in_kb' option")
		}
		chunk = v
	} else if v, ok := out["chunk_length_kb"]; ok {
		chunk = v
		delete(out, "chunk_length_kb")
	}
	n, err := strconv.ParseInt(chunk, 10, 32)
	if err != nil {
		return nil, optionConfigf("Invalid value for chunk_length_in_kb")
	}
	out["chunk_length_in_kb"] = strconv.FormatInt(n, 10)
	if v, ok := out["min_compress_ratio"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, optionConfigf("Invalid value for min_compress_ratio")
		}
		if f == 0 {
			delete(out, "min_compress_ratio")
		} else {
			out["min_compress_ratio"] = JavaDouble(f)
		}
	}
	return out, nil
}

// validateCompressionParams applies CompressionParams.validate's chunk checks.
func validateCompressionParams(m map[string]string) error {
	v, ok := m["chunk_length_in_kb"]
	if !ok {
		return nil
	}
	n, _ := strconv.Atoi(v)
	switch {
	case n <= 0:
		return optionConfigf("Invalid negative or null chunk_length_in_kb")
	case n&(n-1) != 0:
		return optionConfigf("chunk_length_in_kb must be a power of 2")
	}
	return nil
}

// SpeculativeRetry is a table's speculative_retry: how long a read waits
// for a replica before it asks another too.
type SpeculativeRetry struct {
	// Never and Always are NONE and ALWAYS.
	Never, Always bool
	// Percentile (of the replicas' latency) and Fixed are the waits of
	// 99p and 50ms; a hybrid MIN(...) or MAX(...) has both, and Max says
	// which of them it takes.
	Percentile float64
	Fixed      time.Duration
	Max        bool
}

// SpeculativeRetry returns the table's speculative_retry, Cassandra's
// default 99p when it has none.
func (t *Table) SpeculativeRetry() SpeculativeRetry {
	s := strings.Trim(t.Options[OptSpeculativeRetry], "'")
	if s == "" {
		s = "99p"
	}
	r := SpeculativeRetry{}
	parse := func(p string) {
		switch {
		case strings.HasSuffix(p, "ms"):
			n, _ := strconv.Atoi(strings.TrimSuffix(p, "ms"))
			r.Fixed = time.Duration(n) * time.Millisecond
		case strings.HasSuffix(p, "p"):
			r.Percentile, _ = strconv.ParseFloat(strings.TrimSuffix(p, "p"), 64)
		}
	}
	switch {
	case s == "NONE":
		r.Never = true
	case s == "ALWAYS":
		r.Always = true
	case strings.HasPrefix(s, "MIN(") || strings.HasPrefix(s, "MAX("):
		r.Max = strings.HasPrefix(s, "MAX(")
		a, b, _ := strings.Cut(strings.TrimSuffix(s[4:], ")"), ",")
		parse(a)
		parse(b)
	default:
		parse(s)
	}
	return r
}

// Wait returns how long a read waits for a replica before asking another,
// given the replicas' latency quantiles, and false when it never does (NONE,
// or a percentile not known yet).
func (r SpeculativeRetry) Wait(quantile func(q float64) (time.Duration, bool)) (time.Duration, bool) {
	switch {
	case r.Never:
		return 0, false
	case r.Always:
		return 0, true
	}
	var p time.Duration
	known := false
	if r.Percentile > 0 {
		p, known = quantile(r.Percentile / 100)
	}
	switch {
	case r.Fixed > 0 && known && r.Max:
		return max(p, r.Fixed), true
	case r.Fixed > 0 && known:
		return min(p, r.Fixed), true
	case r.Fixed > 0:
		return r.Fixed, true
	}
	return p, known
}
