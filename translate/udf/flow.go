package udf

// Definite assignment, as Java checks it before a local variable is read:
// the compiler carries the set of locals assigned on every path to the
// current point, and meets the sets where paths join. It is simpler than
// the Java rules in one way: an assignment inside the right operand of &&,
// || or ?: counts on neither branch, so a few bodies Java accepts are
// refused with "may not have been initialized".

// flowState is the set of definitely assigned local slots at a point of
// the body; dead marks a point no path reaches, where every local counts
// as assigned.
type flowState struct {
	bits []uint64
	dead bool
}

func (s *flowState) set(slot int) {
	for len(s.bits) <= slot/64 {
		s.bits = append(s.bits, 0)
	}
	s.bits[slot/64] |= 1 << (slot % 64)
}

func (s flowState) has(slot int) bool {
	return s.dead || slot/64 < len(s.bits) && s.bits[slot/64]&(1<<(slot%64)) != 0
}

func (s flowState) clone() flowState {
	return flowState{bits: append([]uint64(nil), s.bits...), dead: s.dead}
}

// meet is the state where paths in states a and b join.
func meet(a, b flowState) flowState {
	switch {
	case a.dead:
		return b.clone()
	case b.dead:
		return a.clone()
	}
	out := flowState{bits: make([]uint64, min(len(a.bits), len(b.bits)))}
	for i := range out.bits {
		out.bits[i] = a.bits[i] & b.bits[i]
	}
	return out
}

// join adds the assignments of b to a: the state after a finally block.
func join(a, b flowState) flowState {
	if a.dead || b.dead {
		return flowState{dead: true}
	}
	out := a.clone()
	for i, w := range b.bits {
		for len(out.bits) <= i {
			out.bits = append(out.bits, 0)
		}
		out.bits[i] |= w
	}
	return out
}

var deadState = flowState{dead: true}
