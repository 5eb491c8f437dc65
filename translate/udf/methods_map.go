package udf

import "strings"

// java.util's maps and Map.Entry. keySet, values and entrySet return
// snapshots that iterate as the map does and refuse changes; entries are
// the map's own, so that Entry.setValue writes through as in Java.

// The classes of the views, which bodies cannot name.
var (
	clsKeySet   = hiddenClass("java.util.HashMap$KeySet", "E", "Set<E>")
	clsValues   = hiddenClass("java.util.HashMap$Values", "E", "Collection<E>")
	clsEntrySet = hiddenClass("java.util.HashMap$EntrySet", "E", "Set<E>")
)

// hiddenClass declares a class of the library that bodies cannot name.
func hiddenClass(full, params string, supers ...string) *jclass {
	c := &jclass{name: full[strings.LastIndexAny(full, ".$")+1:], full: full,
		methods: map[string][]*method{}, fields: map[string]*field{}}
	if params != "" {
		c.params = strings.Split(params, ",")
	}
	classSupers[c] = supers
	return c
}

func declareMaps() {
	c := clsMap
	get := func(r val) *jmap { return r.r.(*jmap) }
	def(c, "V get(Object)", func(_ *frame, r val, a []val) val {
		if e := get(r).get(a[0]); e != nil {
			return e.v
		}
		return null
	})
	def(c, "V getOrDefault(Object,V)", func(_ *frame, r val, a []val) val {
		if e := get(r).get(a[0]); e != nil {
			return e.v
		}
		return a[1]
	})
	def(c, "V put(K,V)", func(fr *frame, r val, a []val) val { old, _ := get(r).put(fr, a[0], a[1]); return old })
	def(c, "V putIfAbsent(K,V)", func(fr *frame, r val, a []val) val {
		m := get(r)
		if e := m.get(a[0]); e != nil && e.v.r != nil {
			return e.v
		}
		m.put(fr, a[0], a[1])
		return null
	})
	def(c, "V remove(Object)", func(_ *frame, r val, a []val) val { old, _ := get(r).remove(a[0]); return old })
	def(c, "boolean remove(Object,Object)", func(_ *frame, r val, a []val) val {
		m := get(r)
		if e := m.get(a[0]); e != nil && javaEquals(e.v, a[1]) {
			m.remove(a[0])
			return zval(true)
		}
		return zval(false)
	})
	def(c, "V replace(K,V)", func(fr *frame, r val, a []val) val {
		m := get(r)
		if e := m.get(a[0]); e != nil {
			old, _ := m.put(fr, a[0], a[1])
			return old
		}
		return null
	})
	def(c, "boolean containsKey(Object)", func(_ *frame, r val, a []val) val { return zval(get(r).get(a[0]) != nil) })
	def(c, "boolean containsValue(Object)", func(_ *frame, r val, a []val) val {
		for _, e := range get(r).entries() {
			if javaEquals(a[0], e.v) {
				return zval(true)
			}
		}
		return zval(false)
	})
	def(c, "int size()", func(_ *frame, r val, _ []val) val { return ival(int32(get(r).size())) })
	def(c, "boolean isEmpty()", func(_ *frame, r val, _ []val) val { return zval(get(r).size() == 0) })
	def(c, "void clear()", func(_ *frame, r val, _ []val) val { get(r).clear(); return null })
	def(c, "void putAll(Map<?,?>)", func(fr *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		m, src := get(r), get(a[0])
		if m.order == hashOrder {
			if n := src.size(); m.tab == 0 {
				m.presize(int(float32(n)/0.75 + 1))
			} else if n > m.tab*3/4 {
				m.presize(m.tab * 2)
			}
		}
		for _, e := range append([]*entry(nil), src.entries()...) {
			m.put(fr, e.k, e.v)
		}
		return null
	})
	def(c, "Set<K> keySet()", func(fr *frame, r val, _ []val) val {
		m := get(r)
		s := newMap(clsKeySet, true)
		for _, e := range m.entries() {
			s.put(fr, e.k, null)
		}
		s.fixed, s.of = fixedSize, m
		return refval(s)
	})
	def(c, "Collection<V> values()", func(fr *frame, r val, _ []val) val {
		m := get(r)
		es := m.entries()
		vals := make([]val, len(es))
		for i, e := range es {
			vals[i] = e.v
		}
		fr.alloc(valSize * len(vals))
		return refval(&jlist{cls: clsValues, elems: vals, fixed: fixedSize, of: m})
	})
	def(c, "Set<Entry<K,V>> entrySet()", func(fr *frame, r val, _ []val) val {
		m := get(r)
		es := m.entries()
		vals := make([]val, len(es))
		for i, e := range es {
			vals[i] = refval(e)
		}
		fr.alloc(valSize * len(vals))
		return refval(&jlist{cls: clsEntrySet, elems: vals, fixed: fixedSize, of: m})
	})
	for n := 0; n <= 5; n++ {
		params := strings.TrimSuffix(strings.Repeat("K,V,", n), ",")
		def(c, "static <K,V> Map<K,V> of("+params+")", func(fr *frame, _ val, a []val) val {
			m := newMap(clsLinkedHashMap, false)
			for i := 0; i+1 < len(a); i += 2 {
				if a[i].r == nil || a[i+1].r == nil {
					npe()
				}
				if _, dup := m.put(fr, a[i], a[i+1]); dup {
					throw(clsIllegalArgument, "duplicate key: %s", toJavaString(fr, a[i]))
				}
			}
			m.cls, m.fixed = clsMap, immutable
			return refval(m)
		})
	}
	def(c, "static <K,V> Map<K,V> copyOf(Map<K,V>)", func(fr *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		m := copyMap(fr, get(a[0]), clsLinkedHashMap, false)
		m.cls, m.fixed = clsMap, immutable
		return refval(m)
	})
	def(c, "static <K,V> Entry<K,V> entry(K,V)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil || a[1].r == nil {
			npe()
		}
		return refval(&entry{k: a[0], v: a[1], dead: true})
	})
	for _, mc := range []*jclass{clsHashMap, clsLinkedHashMap, clsTreeMap} {
		mc := mc
		ctor(mc, "()", func(*frame, val, []val) val { return refval(newMap(mc, false)) })
		ctor(mc, "(Map<K,V>)", func(fr *frame, _ val, a []val) val {
			if a[0].r == nil {
				npe()
			}
			src := get(a[0])
			out := newMap(mc, false)
			out.presize(int(float32(src.size())/0.75 + 1))
			for _, e := range src.entries() {
				out.put(fr, e.k, e.v)
			}
			return refval(out)
		})
		if mc != clsTreeMap {
			ctor(mc, "(int)", func(_ *frame, _ val, a []val) val {
				if a[0].i() < 0 {
					throw(clsIllegalArgument, "Illegal initial capacity: %d", a[0].i())
				}
				m := newMap(mc, false)
				m.presize(int(a[0].i()))
				return refval(m)
			})
		}
	}
	e := clsEntry
	def(e, "K getKey()", func(_ *frame, r val, _ []val) val { return r.r.(*entry).k })
	def(e, "V getValue()", func(_ *frame, r val, _ []val) val { return r.r.(*entry).v })
	def(e, "V setValue(V)", func(_ *frame, r val, a []val) val {
		en := r.r.(*entry)
		if en.dead {
			throwBare(clsUnsupported)
		}
		old := en.v
		en.v = a[0]
		return old
	})
	sm := clsSortedMap
	endKey := func(r val, first bool) *entry {
		es := get(r).entries()
		if len(es) == 0 {
			return nil
		}
		if first {
			return es[0]
		}
		return es[len(es)-1]
	}
	def(sm, "K firstKey()", func(_ *frame, r val, _ []val) val {
		if e := endKey(r, true); e != nil {
			return e.k
		}
		throwBare(clsNoSuchElement)
		return null
	})
	def(sm, "K lastKey()", func(_ *frame, r val, _ []val) val {
		if e := endKey(r, false); e != nil {
			return e.k
		}
		throwBare(clsNoSuchElement)
		return null
	})
	def(clsNavigableMap, "Entry<K,V> firstEntry()", func(_ *frame, r val, _ []val) val {
		if e := endKey(r, true); e != nil {
			return refval(&entry{k: e.k, v: e.v, dead: true})
		}
		return null
	})
	def(clsNavigableMap, "Entry<K,V> lastEntry()", func(_ *frame, r val, _ []val) val {
		if e := endKey(r, false); e != nil {
			return refval(&entry{k: e.k, v: e.v, dead: true})
		}
		return null
	})
	nearKey := func(name string, pick func(c int) bool, fromTop bool) {
		def(clsNavigableMap, "K "+name+"(K)", func(_ *frame, r val, a []val) val {
			es := get(r).entries()
			for k := range es {
				i := k
				if fromTop {
					i = len(es) - 1 - k
				}
				if pick(javaCompare(es[i].k, a[0])) {
					return es[i].k
				}
			}
			return null
		})
	}
	nearKey("ceilingKey", func(c int) bool { return c >= 0 }, false)
	nearKey("higherKey", func(c int) bool { return c > 0 }, false)
	nearKey("floorKey", func(c int) bool { return c <= 0 }, true)
	nearKey("lowerKey", func(c int) bool { return c < 0 }, true)
}
