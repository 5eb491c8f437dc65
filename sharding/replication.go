package sharding

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Full Java class names of the replication strategies cqlpg supports, as
// system_schema.keyspaces shows them.
const (
	// SimpleStrategyClass places replicas on consecutive distinct shards.
	SimpleStrategyClass = "org.apache.cassandra.locator.SimpleStrategy"
	// NetworkTopologyStrategyClass places replicas per datacenter, spread
	// over racks.
	NetworkTopologyStrategyClass = "org.apache.cassandra.locator.NetworkTopologyStrategy"
)

// Option keys with a fixed meaning in the replication map.
const (
	classOption  = "class"
	factorOption = "replication_factor"
)

// cassandraLocator is the package Cassandra resolves short strategy names
// against.
const cassandraLocator = "org.apache.cassandra.locator."

// ConfigError reports invalid replication settings. Its Message is
// Cassandra's own text where one exists, so that the gateway can return it
// verbatim in a ConfigurationException (error code 0x2300).
type ConfigError struct {
	Message string
}

// Error returns the message unchanged, without a package prefix, because
// clients compare it against Cassandra's.
func (e *ConfigError) Error() string {
	return e.Message
}

func configErrorf(format string, args ...any) *ConfigError {
	return &ConfigError{Message: fmt.Sprintf(format, args...)}
}

// Replication is a keyspace's replication setting.
type Replication struct {
	// Class is the strategy's full Java class name, SimpleStrategyClass or
	// NetworkTopologyStrategyClass.
	Class string
	// Factor is the replication factor of SimpleStrategy. For
	// NetworkTopologyStrategy it is the factor given by a
	// 'replication_factor' option, which applies to every datacenter of the
	// ring that DCFactors does not name (Cassandra 4 expands it over the
	// known datacenters the same way); 0 when that option was absent.
	Factor int
	// DCFactors maps datacenter names to their replication factor for
	// NetworkTopologyStrategy. It is nil for SimpleStrategy.
	DCFactors map[string]int
}

// ParseReplication validates the replication map of CREATE or ALTER
// KEYSPACE keyspace and returns its settings. Errors are *ConfigError with
// Cassandra's messages. The class may be given as a short name such as
// 'SimpleStrategy' or as the full class name.
func ParseReplication(keyspace string, opts map[string]string) (Replication, error) {
	name, ok := opts[classOption]
	if !ok {
		return Replication{}, configErrorf("Missing replication strategy class")
	}
	class := canonicalClass(name)
	// Sorted keys make the reported option deterministic when several are
	// wrong; Cassandra reports whichever its hash map yields first.
	keys := slices.Sorted(maps.Keys(opts))
	switch class {
	case SimpleStrategyClass:
		for _, k := range keys {
			if k != classOption && k != factorOption {
				return Replication{}, configErrorf(
					"Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s", k, keyspace)
			}
		}
		v, ok := opts[factorOption]
		if !ok {
			return Replication{}, configErrorf("SimpleStrategy requires a replication_factor strategy option.")
		}
		rf, err := parseFactor(v)
		if err != nil {
			return Replication{}, err
		}
		return Replication{Class: class, Factor: rf}, nil
	case NetworkTopologyStrategyClass:
		rep := Replication{Class: class, DCFactors: make(map[string]int)}
		for _, k := range keys {
			if k == classOption {
				continue
			}
			rf, err := parseFactor(opts[k])
			if err != nil {
				return Replication{}, err
			}
			if k == factorOption {
				rep.Factor = rf
			} else {
				rep.DCFactors[k] = rf
			}
		}
		return rep, nil
	}
	return Replication{}, configErrorf("Unable to find replication strategy class '%s'", class)
}

// canonicalClass turns a strategy name into a full class name the way
// Cassandra does: a name without a dot is looked up in the locator package.
func canonicalClass(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	return cassandraLocator + name
}

// parseFactor parses a replication factor with Java's Integer.parseInt
// rules: decimal, optional sign, 32-bit range.
func parseFactor(v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, configErrorf("Replication factor must be numeric; found %s", v)
	}
	if n < 0 {
		return 0, configErrorf("Replication factor must be non-negative; found %s", v)
	}
	return int(n), nil
}

// Options returns the canonical replication map, as
// system_schema.keyspaces.replication shows it: the full class name plus
// each factor as a decimal string. A NetworkTopologyStrategy factor for
// every datacenter appears as 'replication_factor' when it is non-zero;
// use Expand first to list the datacenters instead, as Cassandra stores it.
func (rep Replication) Options() map[string]string {
	class := canonicalClass(rep.Class)
	m := map[string]string{classOption: class}
	switch class {
	case SimpleStrategyClass:
		m[factorOption] = strconv.Itoa(rep.Factor)
	case NetworkTopologyStrategyClass:
		for dc, rf := range rep.DCFactors {
			m[dc] = strconv.Itoa(rf)
		}
		if rep.Factor > 0 {
			m[factorOption] = strconv.Itoa(rep.Factor)
		}
	}
	return m
}

// Expand returns a copy of rep in which a NetworkTopologyStrategy factor
// for every datacenter has been spelled out for each of dcs that DCFactors
// does not name, with Factor cleared. Other strategies are returned
// unchanged (with DCFactors copied, so the result never aliases rep).
func (rep Replication) Expand(dcs []string) Replication {
	out := rep
	out.DCFactors = maps.Clone(rep.DCFactors)
	if canonicalClass(rep.Class) != NetworkTopologyStrategyClass {
		return out
	}
	if out.DCFactors == nil {
		out.DCFactors = make(map[string]int)
	}
	for _, dc := range dcs {
		if _, ok := out.DCFactors[dc]; !ok {
			out.DCFactors[dc] = rep.Factor
		}
	}
	out.Factor = 0
	return out
}

// String renders the setting as a CQL map literal with the class first and
// the other keys sorted, e.g. {'class': 'org.apache.cassandra.locator.
// SimpleStrategy', 'replication_factor': '1'}.
func (rep Replication) String() string {
	opts := rep.Options()
	var b strings.Builder
	b.WriteString("{'class': ")
	b.WriteString(quoteCQL(opts[classOption]))
	delete(opts, classOption)
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		b.WriteString(", ")
		b.WriteString(quoteCQL(k))
		b.WriteString(": ")
		b.WriteString(quoteCQL(opts[k]))
	}
	b.WriteString("}")
	return b.String()
}

// quoteCQL writes s as a CQL string literal, doubling embedded quotes.
func quoteCQL(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
