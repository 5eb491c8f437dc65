package udf

import (
	"slices"
	"sort"
)

// Sets and maps. A set is a map whose values go unused. Iteration follows
// Java's order for each class: insertion order for the Linked classes
// (and for the collections Cassandra deserializes arguments into), the
// natural order of the keys for the Tree classes, and for HashMap and
// HashSet the order of Java's hash table, which the map works out from the
// keys' Java hash codes and the table size Java would have grown to.

// orderKind is how a map orders its entries.
type orderKind uint8

const (
	linkedOrder orderKind = iota
	hashOrder
	sortedOrder
)

// entry is a map entry (Map.Entry), or a set element.
type entry struct {
	k, v val
	key  any   // k's equality key
	seq  int   // insertion sequence
	hash int32 // k's Java hash code, for hash order
	dead bool
}

// jmap is a java.util.Map or java.util.Set.
type jmap struct {
	cls   *jclass
	set   bool
	order orderKind
	idx   map[any]*entry // linked and hash order
	list  []*entry       // insertion order with dead entries; live and sorted for sortedOrder
	ndead int
	mod   int
	fixed uint8
	tab   int      // hash order: Java's table capacity, 0 before the first put
	init  int      // hash order: the capacity the constructor asked for
	seq   int      // the next insertion sequence
	cache []*entry // hash order: the iteration order, nil when stale
	of    *jmap    // the map whose keys this set is a view of
}

// newMap makes an empty map (or set) of class cls.
func newMap(cls *jclass, set bool) *jmap {
	m := &jmap{cls: cls, set: set}
	switch cls {
	case clsHashMap, clsHashSet:
		m.order = hashOrder
		m.init = 16
	case clsTreeMap, clsTreeSet:
		m.order = sortedOrder
	}
	if m.order != sortedOrder {
		m.idx = map[any]*entry{}
	}
	return m
}

// size is the number of entries.
func (m *jmap) size() int {
	if m.order == sortedOrder {
		return len(m.list)
	}
	return len(m.idx)
}

// search finds k in a sorted map: its index, and whether it is there.
func (m *jmap) search(k val) (int, bool) {
	if k.r == nil {
		npe()
	}
	i := sort.Search(len(m.list), func(i int) bool { return javaCompare(m.list[i].k, k) >= 0 })
	return i, i < len(m.list) && javaCompare(m.list[i].k, k) == 0
}

// get returns the entry of key k, or nil.
func (m *jmap) get(k val) *entry {
	if m.order == sortedOrder {
		if len(m.list) == 0 && k.r != nil {
			return nil
		}
		i, ok := m.search(k)
		if !ok {
			return nil
		}
		return m.list[i]
	}
	return m.idx[keyOf(k)]
}

// mutate checks that the map may change and counts a structural change.
func (m *jmap) mutate() {
	if m.fixed != mutable {
		throwBare(clsUnsupported)
	}
	m.mod++
	m.cache = nil
}

// put sets k's value, returning the previous one and whether there was
// one.
func (m *jmap) put(fr *frame, k, v val) (val, bool) {
	if m.fixed != mutable {
		throwBare(clsUnsupported)
	}
	if m.order == sortedOrder {
		if len(m.list) == 0 {
			javaCompare(k, k) // a TreeMap's first key must be comparable too
		}
		i, ok := m.search(k)
		if ok {
			old := m.list[i].v
			m.list[i].v = v
			return old, true
		}
		m.mutate()
		fr.alloc(entrySize)
		m.list = slices.Insert(m.list, i, &entry{k: k, v: v, seq: m.seq})
		m.seq++
		return null, false
	}
	key := keyOf(k)
	if e := m.idx[key]; e != nil {
		old := e.v
		e.v = v
		return old, true
	}
	m.mutate()
	fr.alloc(entrySize)
	e := &entry{k: k, v: v, key: key, seq: m.seq}
	m.seq++
	if m.order == hashOrder {
		e.hash = javaHash(k)
		if m.tab == 0 {
			m.tab = m.init
		}
		if len(m.idx)+1 > m.tab*3/4 {
			m.tab *= 2
		}
	}
	m.idx[key] = e
	m.list = append(m.list, e)
	return null, false
}

// remove deletes k, returning its value and whether it was there.
func (m *jmap) remove(k val) (val, bool) {
	if m.fixed != mutable {
		throwBare(clsUnsupported)
	}
	if m.order == sortedOrder {
		if len(m.list) == 0 && k.r != nil {
			return null, false
		}
		i, ok := m.search(k)
		if !ok {
			return null, false
		}
		m.mutate()
		old := m.list[i].v
		m.list = slices.Delete(m.list, i, i+1)
		return old, true
	}
	key := keyOf(k)
	e := m.idx[key]
	if e == nil {
		return null, false
	}
	m.mutate()
	delete(m.idx, key)
	e.dead = true
	m.ndead++
	if m.ndead > len(m.list)/2 {
		m.list = slices.DeleteFunc(m.list, func(e *entry) bool { return e.dead })
		m.ndead = 0
	}
	return e.v, true
}

// clear removes every entry.
func (m *jmap) clear() {
	if m.size() == 0 {
		if m.fixed != mutable {
			throwBare(clsUnsupported)
		}
		return
	}
	m.mutate()
	m.list, m.ndead = nil, 0
	if m.idx != nil {
		m.idx = map[any]*entry{}
	}
}

// entries returns the live entries in Java's iteration order. The slice
// is the map's own or cached: callers must not change it.
func (m *jmap) entries() []*entry {
	switch m.order {
	case sortedOrder:
		return m.list
	case hashOrder:
		if m.cache == nil || len(m.cache) != len(m.idx) {
			m.cache = m.hashOrdered()
		}
		return m.cache
	}
	if m.ndead == 0 {
		return m.list
	}
	out := make([]*entry, 0, len(m.idx))
	for _, e := range m.list {
		if !e.dead {
			out = append(out, e)
		}
	}
	return out
}

// hashOrdered sorts the live entries as a Java HashMap iterates them: by
// bucket, (hash ^ hash>>>16) & (capacity-1), then by insertion within a
// bucket, which splitting buckets on resize preserves.
func (m *jmap) hashOrdered() []*entry {
	out := make([]*entry, 0, len(m.idx))
	for _, e := range m.list {
		if !e.dead {
			out = append(out, e)
		}
	}
	mask := uint32(m.tab - 1)
	bucket := func(e *entry) uint32 {
		h := uint32(e.hash)
		return (h ^ h>>16) & mask
	}
	sort.SliceStable(out, func(i, j int) bool { return bucket(out[i]) < bucket(out[j]) })
	return out
}

// presize sets the capacity a hash map's constructor or a bulk insertion
// asks for, as Java's HashMap.tableSizeFor does.
func (m *jmap) presize(n int) {
	if m.order != hashOrder {
		return
	}
	c := 1
	for c < n && c < 1<<30 {
		c <<= 1
	}
	if m.tab == 0 {
		m.init = c
	} else if c > m.tab {
		m.tab = c
		m.cache = nil
	}
}

// copyMap returns a mutable copy of m of class cls.
func copyMap(fr *frame, m *jmap, cls *jclass, set bool) *jmap {
	out := newMap(cls, set)
	if out.order == hashOrder {
		out.presize(max(int(float32(m.size())/0.75)+1, 16))
	}
	for _, e := range m.entries() {
		out.put(fr, e.k, e.v)
	}
	return out
}

// newList makes an empty list of class cls.
func newList(cls *jclass, n int) *jlist {
	return &jlist{cls: cls, elems: make([]val, 0, n)}
}

// change checks that a list may change size and counts the change.
func (l *jlist) change() {
	if l.fixed != mutable {
		throwBare(clsUnsupported)
	}
	l.mod++
}

// elements returns the elements of any collection, in iteration order,
// as a slice callers must not change.
func elements(v val) []val {
	switch r := v.r.(type) {
	case nil:
		npe()
	case *jlist:
		return r.elems
	case *jarray:
		return r.vals
	case *jmap:
		es := r.entries()
		out := make([]val, len(es))
		for i, e := range es {
			if r.set {
				out[i] = e.k
			} else {
				out[i] = refval(e)
			}
		}
		return out
	}
	return nil
}
