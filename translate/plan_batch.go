package translate

// CheckBatch applies Cassandra's rules on what one batch may hold, in its
// order: no batch-wide TTL, a batch-wide timestamp only without conditions
// or counters, counter and other writes apart, counters never in a logged
// batch, and conditions on one table. ttl and timestamp say whether the
// batch sets them; a BATCH message sets neither.
func CheckBatch(kind BatchKind, ttl, timestamp bool, writes []*Write) error {
	if ttl {
		return invalidf("Global TTL on the BATCH statement is not supported.")
	}
	conditional := false
	for _, w := range writes {
		conditional = conditional || w.Conditions != nil
	}
	if timestamp && conditional {
		return invalidf("Cannot provide custom timestamp for conditional BATCH")
	}
	if timestamp && kind == CounterBatch {
		return invalidf("Cannot provide custom timestamp for counter BATCH")
	}
	counters, others := false, false
	for _, w := range writes {
		if timestamp && w.Timestamp != nil {
			return invalidf("Timestamp must be set either on BATCH or individual statements")
		}
		if w.Table.IsCounter() {
			counters = true
		} else {
			others = true
		}
	}
	switch {
	case timestamp && counters:
		return invalidf("Cannot provide custom timestamp for a BATCH containing counters")
	case kind == CounterBatch && others:
		return invalidf("Cannot include non-counter statement in a counter batch")
	case counters && others:
		return invalidf("Counter and non-counter mutations cannot exist in the same batch")
	case kind == LoggedBatch && counters:
		return invalidf("Cannot include a counter statement in a logged batch")
	}
	if conditional {
		for _, w := range writes[1:] {
			if w.Table.Keyspace != writes[0].Table.Keyspace || w.Table.Name != writes[0].Table.Name {
				return invalidf("Batch with conditions cannot span multiple tables")
			}
		}
	}
	return nil
}
